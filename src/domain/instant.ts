/**
 * An instant as a query string gives it (`GET /v1/metrics/series?from=`, `GET /v1/workflows?createdAfter=`): epoch
 * milliseconds, or an ISO 8601 date, or a date-time with its time zone.
 */
export const INSTANT_PATTERN = "^(\\d{1,16}|\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?)$";

/** The latest instant a JavaScript date holds; later epoch milliseconds are not a time. */
const LAST_INSTANT_MS = 8.64e15;

/** Epoch ms of an instant the pattern let through, or undefined for one that is no date (a 13th month). */
export function parseInstant(text: string): number | undefined {
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  return Number.isFinite(ms) && ms >= 0 && ms <= LAST_INSTANT_MS ? ms : undefined;
}
