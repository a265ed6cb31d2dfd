/** How our own retries (queue sends, index writes, RPCs, redeliveries) space themselves out. */
export interface Backoff {
  /** The first delay. */
  initialMs: number;
  /** No delay is longer than this. */
  maxMs: number;
  /** Fraction of the delay added or removed at random, so callers failing together do not retry in lockstep. */
  jitter?: number;
}

/**
 * The delay after `failures` failures in a row (0 = the first retry): `initialMs` doubled per failure, capped
 * at `maxMs`, jittered. A user's steps have their own policy (`retryDelayMs`), which also honours Retry-After.
 */
export function backoffMs(failures: number, backoff: Backoff, random: () => number = Math.random): number {
  const exponential = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.max(0, failures));
  const jitter = backoff.jitter ?? 0;
  return Math.round(Math.min(backoff.maxMs, exponential * (1 + jitter * (2 * random() - 1))));
}
