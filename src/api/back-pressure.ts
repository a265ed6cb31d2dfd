import { backPressureLagMs } from "../config";
import { backPressure, type BackPressure, type QueueLagSample } from "../domain/back-pressure";
import { currentQueueLag } from "../queue-lag/monitor";
import { ApiError } from "./errors";

/**
 * Back-pressure instead of collapse: while our own task queue is further behind than BACKPRESSURE_LAG_MS, a
 * new start is refused with 503 and Retry-After, before anything is stored. What was accepted keeps running;
 * a client that waits and retries gets in once the queue has caught up. Never an error inside a workflow.
 */
export async function refuseStartWhenOverloaded(env: Env): Promise<void> {
  const { verdict } = await backPressureNow(env);
  if (!verdict.overloaded) return;
  const seconds = verdict.retryAfterSeconds;
  throw new ApiError(
    503,
    "overloaded",
    `Shepherd's task queue is ${(verdict.lagMs / 1000).toFixed(1)} s behind; nothing was started: retry after ${seconds} seconds.`,
    undefined,
    { "Retry-After": String(seconds) },
  );
}

/** The queue's lag as last reported, the bound, and what the front door makes of them now. */
export async function backPressureNow(env: Env): Promise<{ sample: QueueLagSample | undefined; boundMs: number; verdict: BackPressure }> {
  const now = Date.now();
  const sample = await currentQueueLag(env, now);
  const boundMs = backPressureLagMs(env);
  return { sample, boundMs, verdict: backPressure(sample, now, boundMs) };
}
