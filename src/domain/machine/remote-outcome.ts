/**
 * How an agent reads a remote service's answer. Pure, so the classification is tested on its own and the
 * agent only moves bytes.
 */
export type RemoteOutcome =
  | { kind: "succeeded" }
  | { kind: "accepted" }
  | { kind: "transient"; retryAfterMs?: number }
  | { kind: "permanent" };

/**
 * 2xx succeeds, 202 means the remote will report through its task token. 408 (timeout), 425 (too early),
 * 429 (rate limited) and every 5xx say "not now": the same request may work later. Any other 4xx says the
 * request itself is wrong, so repeating it would only repeat the failure. Anything else (1xx, 3xx left after
 * redirects) is unexpected and treated as transient rather than losing the step.
 */
export function classifyHttpStatus(status: number, retryAfter: string | null, now: number): RemoteOutcome {
  if (status === 202) return { kind: "accepted" };
  if (status >= 200 && status < 300) return { kind: "succeeded" };
  if (status === 408 || status === 425 || status === 429 || status >= 500) {
    const retryAfterMs = parseRetryAfter(retryAfter, now);
    return retryAfterMs === undefined ? { kind: "transient" } : { kind: "transient", retryAfterMs };
  }
  if (status >= 400 && status < 500) return { kind: "permanent" };
  return { kind: "transient" };
}

/** `Retry-After` is either delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
