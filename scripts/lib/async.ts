// Waiting, bounded: a sleep, a race against a timer that never outlives it, a map with at most N calls in
// flight, a poll until something holds, and a sampler that runs every interval until stopped. Every loop
// here ends: by a deadline, by the list running out, or by stop().
/* global setTimeout, clearTimeout */

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What `promise` resolves to, or `fallback` once ms have passed, whichever comes first. The timer is
 * cleared either way, so a finished race does not keep the process alive until it fires.
 */
export async function within(promise, ms, fallback = undefined) {
  let timer;
  try {
    return await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(() => resolve(fallback), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs fn over items with at most `limit` calls in flight; results in item order. */
export async function mapPool(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Calls check() every intervalMs until it returns a truthy value (returned) or timeoutMs passes (throws). */
export async function waitUntil(check, { timeoutMs, intervalMs = 100, what = "condition" }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/**
 * Calls sample() every intervalMs (the first time one interval from now) until stop(), skipping the turns
 * where paused() holds; sample() returning false ends the sampling for good (e.g. the route it reads is
 * missing). stop() takes effect at once; what it returns resolves to `result` (what the samples filled in)
 * once the last sample is done.
 */
export function sampleEvery(intervalMs, sample, { paused = () => false, result } = {}) {
  let stopped = false;
  let timer;
  let wake;
  const loop = (async () => {
    while (!stopped) {
      await new Promise((resolve) => {
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
      return loop.then(() => result);
    },
  };
}
