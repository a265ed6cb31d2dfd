import { UsageError } from "./failures";

/** A flag that must be a whole number ≥ 1 before anything is sent (a version). */
export function positiveInteger(flag: string, text: string, usage: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1) throw new UsageError(`--${flag} must be a whole number ≥ 1 (got "${text}")`, usage);
  return value;
}

/** The flags that were given, for a query string: the service checks their values and names a bad one. */
export function definedOnly(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** A time flag: epoch milliseconds, or an ISO 8601 date or time ("2026-05-01", "2026-05-01T12:00:00Z"). */
export function timeFlag(flag: string, text: string, usage: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isSafeInteger(value) || value < 0) throw new UsageError(`--${flag} must be epoch milliseconds or an ISO 8601 time (got "${text}")`, usage);
  return value;
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration flag: milliseconds, or a whole number with a unit (90s, 10m, 2h, 1d); the service checks its bound. */
export function durationMs(flag: string, text: string, usage: string): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim());
  const value = match ? Number(match[1]) * (DURATION_UNITS_MS[match[2] ?? "ms"] ?? 1) : NaN;
  if (!Number.isSafeInteger(value)) throw new UsageError(`--${flag} must be milliseconds or a whole number with a unit: 90s, 10m, 2h, 1d (got "${text}")`, usage);
  return value;
}
