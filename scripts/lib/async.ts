// Waiting, bounded: a sleep, a race against a timer that never outlives it, a map with at most N calls in
// flight, a poll until something holds, and a sampler that runs every interval until stopped. Every loop
// here ends: by a deadline, by the list running out, or by stop().
/* global setTimeout, clearTimeout */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What `promise` resolves to, or `fallback` once ms have passed, whichever comes first. The timer is
 * cleared either way, so a finished race does not keep the process alive until it fires.
 */
export async function within<T, const F = undefined>(promise: Promise<T>, ms: number, fallback?: F): Promise<T | F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([promise, new Promise<F>((resolve) => (timer = setTimeout(() => resolve(fallback as F), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs fn over items with at most `limit` calls in flight; results in item order. */
export async function mapPool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R> | R): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export interface WaitOptions {
  timeoutMs: number;
  /** Between two checks (default 100 ms). */
  intervalMs?: number;
  /** Named in the timeout's message (default "condition"). */
  what?: string;
}

/** Calls check() every intervalMs until it returns a truthy value (returned) or timeoutMs passes (throws). */
export async function waitUntil<T>(check: () => Promise<T> | T, { timeoutMs, intervalMs = 100, what = "condition" }: WaitOptions): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export interface SampleOptions<R> {
  /** A turn where this holds is skipped (default: never). */
  paused?: () => boolean;
  /** What stop() resolves to: the object the samples fill in. */
  result?: R;
}

export interface Sampler<R> {
  /** Ends the sampling at once; resolves to `result` once the last sample is done. */
  stop(): Promise<R>;
}

/**
 * Calls sample() every intervalMs (the first time one interval from now) until stop(), skipping the turns
 * where paused() holds; sample() returning false ends the sampling for good (e.g. the route it reads is
 * missing). stop() takes effect at once; what it returns resolves to `result` (what the samples filled in)
 * once the last sample is done.
 */
export function sampleEvery<R = undefined>(
  intervalMs: number,
  sample: () => Promise<unknown> | unknown,
  { paused = () => false, result }: SampleOptions<R> = {},
): Sampler<R> {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, intervalMs);
      });
      if (stopped || paused()) continue;
      if ((await sample()) === false) return;
    }
  })();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      // R is undefined unless `result` was given: it is inferred from it.
      return loop.then(() => result as R);
    },
  };
}
