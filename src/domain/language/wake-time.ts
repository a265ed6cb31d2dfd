/**
 * The time a `sleep.until` names once templated: epoch milliseconds (a number, or a string of digits) or an ISO
 * 8601 date-time. Anything else is undefined: a date in some other format is too easy to read wrongly.
 */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const EPOCH_MS = /^\d{1,16}$/;

export function parseWakeTime(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (EPOCH_MS.test(text)) return parseWakeTime(Number(text));
  if (!ISO_8601.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : at;
}
