/**
 * How the rest of Shepherd reaches a pool: one object per tenant and pool, named `<tenant>:<pool>`. The methods
 * are declared here so callers need no import of the object's class.
 */
import type { PoolTaskOffer, PoolStats, PollRequest, WorkerTask } from "./pool-types";

export interface PoolStub {
  offer(offer: PoolTaskOffer): Promise<void>;
  withdraw(key: string): Promise<void>;
  poll(request: PollRequest): Promise<{ tasks: WorkerTask[] }>;
  abandon(pollId: string): Promise<void>;
  finished(key: string): Promise<void>;
  stats(pool: string): Promise<PoolStats>;
}

export function poolFor(env: Env, tenant: string, pool: string): PoolStub {
  return env.WORKER_POOLS.getByName(`${tenant}:${pool}`) as unknown as PoolStub;
}

/** One attempt is one task: its key in every pool it is offered to. */
export function taskKey(workflowId: string, stepId: string, attempt: number): string {
  return `${workflowId}/${stepId}#${attempt}`;
}
