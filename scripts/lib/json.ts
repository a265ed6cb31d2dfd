// Reading what JSON.parse gives back: the tools read answers whose shape they do not control, so a value is
// `unknown` until one of these has looked at it.

/** An object (or array) whose fields can be read. */
export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

/** value[key] when value is an object, else undefined: what `value?.[key]` reads on a parsed answer. */
export function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

/** A number field, undefined when it is missing or not a number. */
export function numberField(value: unknown, key: string): number | undefined {
  const found = field(value, key);
  return typeof found === "number" ? found : undefined;
}

/** A string field, undefined when it is missing or not a string. */
export function stringField(value: unknown, key: string): string | undefined {
  const found = field(value, key);
  return typeof found === "string" ? found : undefined;
}

/** What a caught error says: its message, or the thrown value itself when it is no Error. */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));
