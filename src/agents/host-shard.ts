import { agentHostShards } from "../config";
import { fnv1a } from "../domain/security/fnv1a";
import type { ClaimedTask } from "../domain/machine";
import type { TaskMessage } from "../domain/machine/task-message";

/** What became of a task message handed to a host. */
export type HandOffResult = { started: true } | { started: false; reason: string };

/**
 * How a message that comes straight from its workflow's object, not from the queue, is taken (see AgentHost); the
 * object sends it through the queue when the host does not take it.
 * - `room`: a start's first attempts, while the host has room, or the tenant and name are under their fair share.
 * - `fair-share`: the supervisor's retries, only while the tenant and name are under their fair share of the host.
 *   A busy tenant's retries go through the queue: its lag is the back-pressure that keeps the hosts from being
 *   flooded (retries handed off whenever there was room kept the lag at 0 while timeouts fed more retries).
 */
export type HandOff = "room" | "fair-share";

export interface TakeOptions {
  handOff?: HandOff;
}

/** The one method callers outside the host use; declared here so the scheduler's outbox needs no import of the host. */
export interface AgentHostStub {
  take(message: TaskMessage, options?: TakeOptions): Promise<HandOffResult>;
  reserve(attempt: AttemptOnHost): Promise<boolean>;
  run(message: TaskMessage, task: ClaimedTask): Promise<void>;
}

/** What a host needs to know of an attempt to say whether it has room for it. */
export type AttemptOnHost = Pick<TaskMessage, "tenant" | "workflowId" | "stepId" | "attempt" | "name">;

/**
 * The host an attempt runs on: the step's own place among the hosts, moved on by one for each attempt, so a
 * retry never runs on the host that just ran the attempt before it (a host in trouble does not get the step
 * back), while a message delivered twice for one attempt still reaches the same host.
 */
export function agentHostShardOf(message: Pick<TaskMessage, "tenant" | "workflowId" | "stepId" | "attempt">, shards: number): number {
  return (fnv1a(`${message.tenant}:${message.workflowId}:${message.stepId}`) + message.attempt) % shards;
}

/** The name of host `shard`'s object: one place, so every caller reaches the same hosts. */
export function agentHostName(shard: number): string {
  return `agents-${shard}`;
}

export function agentHostFor(env: Env, message: Omit<AttemptOnHost, "name">): AgentHostStub {
  return env.AGENT_HOST.getByName(agentHostName(agentHostShardOf(message, agentHostShards(env)))) as unknown as AgentHostStub;
}
