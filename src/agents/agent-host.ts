import { DurableObject } from "cloudflare:workers";
import type { ClaimedTask } from "../domain/machine";
import type { TaskMessage } from "../domain/task-message";
import { performTask } from "./perform-task";

/** Enough hosts that no one object's request rate or connection limit bounds the agents. */
const AGENT_HOST_SHARDS = 64;

/**
 * Where claimed attempts run. `perform` returns as soon as the attempt has started; the work (the remote
 * call, heartbeats, the report) goes on in this object, so the queue consumer is free for the next batch.
 * Holds no state: if the object is evicted mid-call, heartbeats stop and the supervisor retries the attempt.
 */
export class AgentHost extends DurableObject<Env> {
  private readonly running = new Set<Promise<void>>();

  perform(message: TaskMessage, task: ClaimedTask): { started: true } {
    const work: Promise<void> = performTask(message, task, this.env).finally(() => this.running.delete(work));
    this.running.add(work);
    return { started: true };
  }
}

/** FNV-1a, to spread attempts evenly and stably over the hosts. */
function shardOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % AGENT_HOST_SHARDS;
}

export function agentHostFor(env: Env, message: TaskMessage): { perform(message: TaskMessage, task: ClaimedTask): Promise<{ started: true }> } {
  return env.AGENT_HOST.getByName(`agents-${shardOf(`${message.tenant}:${message.workflowId}:${message.stepId}`)}`) as unknown as {
    perform(message: TaskMessage, task: ClaimedTask): Promise<{ started: true }>;
  };
}
