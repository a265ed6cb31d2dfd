// Small helpers shared by the bench modules: bounded HTTP, bounded concurrency, waiting, statistics.
/* global fetch, AbortSignal, setTimeout */

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One JSON request with a timeout; never throws for an HTTP status, only for a network failure or a
 * timeout. Returns { status, body, text, headers } (body undefined when it is not JSON).
 */
export async function requestJson(url, { method = "GET", body, headers = {}, timeoutMs = 30_000 } = {}) {
  const response = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { "Content-Type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, text, headers: response.headers };
}

/**
 * Retry-After as seconds from now (it may be a number of seconds or an HTTP date); undefined when absent or
 * unreadable, so the caller can tell "no advice" from "retry at once".
 */
export function retryAfterSeconds(headers) {
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
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

/** Percentile by nearest rank (p in 0..100) of the finite numbers; undefined for none. */
export function percentile(values, p) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export const median = (values) => percentile(values, 50);
