/**
 * How an agent reads a remote service's answer. Pure, so the classification is tested on its own and the
 * agent only moves bytes.
 */

/**
 * Which rule decided whether a failed attempt may be retried; its error keeps it, so the step's view and its
 * `step_failed` history say why a failure was retried or was final:
 * - `nonRetryableStatuses` / `retryableStatuses`: the step's `retry` listed the remote's HTTP status;
 * - `default`: Shepherd's own classification, of the status (below) or of a failure without one (a network
 *   error, a deadline: retryable; a refused target, too many redirects: not);
 * - `reported`: the `fail` report's own `retryable` (a worker's, or a remote's that answered 202), default true.
 */
export const RETRY_RULES = ["nonRetryableStatuses", "retryableStatuses", "default", "reported"] as const;
export type RetryRule = (typeof RETRY_RULES)[number];

/** The HTTP statuses a step moves across the transient/permanent line (its `retry`'s two lists). */
export interface StatusRules {
  retryableStatuses?: readonly number[];
  nonRetryableStatuses?: readonly number[];
}

export type RemoteOutcome =
  | { kind: "succeeded" }
  | { kind: "accepted" }
  | { kind: "transient"; rule: RetryRule; retryAfterMs?: number }
  | { kind: "permanent"; rule: RetryRule };

/**
 * 2xx succeeds, 202 means the remote will report through its task token, whatever the lists say: they move
 * failures only. Then the step's own lists, since it knows its remote (a 409 that means "done already, stop", a
 * 404 until a record has replicated). Then the default: 408 (timeout), 425 (too early), 429 (rate limited) and
 * every 5xx say "not now": the same request may work later. Any other 4xx says the request itself is wrong, so
 * repeating it would only repeat the failure. Anything else (1xx, 3xx left after redirects) is unexpected and
 * treated as transient rather than losing the step.
 */
export function classifyHttpStatus(status: number, retryAfter: string | null, now: number, rules: StatusRules = {}): RemoteOutcome {
  if (status === 202) return { kind: "accepted" };
  if (status >= 200 && status < 300) return { kind: "succeeded" };
  if (rules.nonRetryableStatuses?.includes(status)) return { kind: "permanent", rule: "nonRetryableStatuses" };
  if (rules.retryableStatuses?.includes(status)) return transient("retryableStatuses", retryAfter, now);
  if (status === 408 || status === 425 || status === 429 || status >= 500) return transient("default", retryAfter, now);
  if (status >= 400 && status < 500) return { kind: "permanent", rule: "default" };
  return { kind: "transient", rule: "default" };
}

function transient(rule: RetryRule, retryAfter: string | null, now: number): RemoteOutcome {
  const retryAfterMs = parseRetryAfter(retryAfter, now);
  return retryAfterMs === undefined ? { kind: "transient", rule } : { kind: "transient", rule, retryAfterMs };
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
