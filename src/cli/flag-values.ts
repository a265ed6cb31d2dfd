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
