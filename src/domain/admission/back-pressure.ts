import { overFairShare, type DeliveryCount, type FairShareKey } from "./fair-share";

/** One measurement of our own queue's lag: how long the messages being delivered had waited. */
export interface QueueLagSample {
  lagMs: number;
  /** When it was measured. */
  at: number;
}

/**
 * A sample older than this says nothing about now: consumers report while they receive messages, so no fresh
 * sample means the queue is empty (or not being consumed, which back-pressure at the front door cannot mend).
 */
export const QUEUE_LAG_FRESH_MS = 5_000;

/** The default bound: past 10 s of queue lag, new starts (of those filling the queue) are refused until it catches up. */
export const DEFAULT_BACKPRESSURE_LAG_MS = 10_000;

export type BackPressure = { overloaded: false } | { overloaded: true; lagMs: number; retryAfterSeconds: number };

/**
 * Whether the front door should refuse new starts. Only starts are refused: they are what adds to the backlog,
 * while everything already accepted keeps running. A refused client is told to come back once the queue should
 * be back within the bound: a second per second of excess, at least 1 s and at most 30 s. Longer waits leave
 * the agents idle once the queue drains (with half the lag, and a gauge held up until it went stale, the burst
 * bench made 122–140 steps/s; with this and the caught-up rule of the lag report, 152 at every W).
 */
export function backPressure(sample: QueueLagSample | undefined, now: number, boundMs: number): BackPressure {
  if (!sample || now - sample.at > QUEUE_LAG_FRESH_MS || sample.lagMs <= boundMs) return { overloaded: false };
  const retryAfterSeconds = Math.min(30, Math.max(1, Math.ceil((sample.lagMs - boundMs) / 1_000)));
  return { overloaded: true, lagMs: sample.lagMs, retryAfterSeconds };
}

/** What the front door knows of the task queues: the worst fresh lag, and who the recent deliveries were for. */
export interface QueueGauge {
  sample: QueueLagSample | undefined;
  /** Summed per (tenant, name): see `sumDeliveries`. */
  deliveries: DeliveryCount[];
}

/**
 * Back-pressure for one start: the queues are past the bound and this start's tenant and workflow name are among
 * those filling them (`overFairShare`). Everybody else is admitted, so one tenant's burst never refuses another's
 * starts; the noisy one is told to come back as before, and its refused starts are what lets the queue drain.
 */
export function admission(gauge: QueueGauge, key: FairShareKey, now: number, boundMs: number): BackPressure {
  const verdict = backPressure(gauge.sample, now, boundMs);
  // No one's deliveries known (consumers of an older version report none): everyone is taken to fill the queue.
  if (!verdict.overloaded || gauge.deliveries.length === 0 || overFairShare(gauge.deliveries, key)) return verdict;
  return { overloaded: false };
}
