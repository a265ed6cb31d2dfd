/**
 * When the client sends a request again. Only 429 (the tenant's write limit, or a full inbox) and 503 (a busy or
 * briefly unavailable workflow) are retried: both are answered before anything changed, and every write of the API
 * is idempotent by its id (start, event, schedule), so a second send cannot do the work twice. Any other status is
 * the caller's to handle: retrying a 400 or a 409 cannot change the answer.
 */
export interface RetryPolicy {
  /** Tries in all, the first included. Default 4. */
  maxAttempts: number;
  /** The longest wait between tries, whatever Retry-After asks. Default 30 000 ms. */
  maxDelayMs: number;
  /** The first backoff step when there is no Retry-After; it doubles per try, with full jitter. Default 500 ms. */
  baseDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 4, maxDelayMs: 30_000, baseDelayMs: 500 };

const RETRIED_STATUSES = new Set([429, 503]);

export interface RetryContext {
  status: number;
  /** The Retry-After header as sent, if any: seconds or an HTTP date. */
  retryAfter: string | null;
  /** The try that just failed, 1 for the first. */
  attempt: number;
  now: number;
  /** A number in [0, 1), for the jitter. */
  random: number;
}

/** How long to wait before the next try, or undefined when this answer is final. */
export function retryDelayMs(policy: RetryPolicy, context: RetryContext): number | undefined {
  if (!RETRIED_STATUSES.has(context.status) || context.attempt >= policy.maxAttempts) return undefined;
  const asked = retryAfterMs(context.retryAfter, context.now);
  if (asked !== undefined) return Math.min(asked, policy.maxDelayMs);
  // Full jitter: clients that were limited together do not come back together.
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (context.attempt - 1));
  return Math.floor(context.random * ceiling);
}

/** Retry-After in milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
