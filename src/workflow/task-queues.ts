import { taskQueueBinding, taskQueueShards } from "../config";
import { fnv1a } from "../domain/security/fnv1a";

/**
 * Which of `shards` task queues carries a workflow's messages. One queue delivers about 5 000 messages a second
 * (docs/capacity.md), so the load is spread by workflow: all of one workflow's messages take the same queue and
 * keep their order, and every object and isolate picks the same queue without asking anyone.
 */
export function taskQueueShardOf(workflowId: string, shards: number): number {
  return fnv1a(workflowId) % shards;
}

/** The queue a workflow's task messages are sent to: TASKS for shard 0, TASKS_k for shard k. */
export function taskQueueFor(env: Env, workflowId: string): Queue {
  const shard = taskQueueShardOf(workflowId, taskQueueShards(env));
  // taskQueueShards counts only bound queues, so the binding is there; TASKS is the fallback the types want.
  return taskQueueBinding(env, shard) ?? env.TASKS;
}
