import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { UsageError } from "./failures";

/**
 * A JSON or YAML file read as a value ("-" reads stdin). A `.json` file is read as JSON, for JSON's own error
 * messages; anything else as YAML, which also reads JSON. What the value means is the service's to check.
 */
export function readDocument(path: string, usage: string): unknown {
  let text: string;
  try {
    text = readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, usage);
  }
  try {
    return path.toLowerCase().endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new UsageError(`${path} is not valid ${path.toLowerCase().endsWith(".json") ? "JSON" : "YAML"}: ${firstLine(error)}`, usage);
  }
}

/** A flag's JSON value (--input, --payload). */
export function readJsonFlag(flag: string, text: string, usage: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--${flag} is not JSON: ${firstLine(error)}`, usage);
  }
}

/** A JSON object read from a document, or a usage error naming the file. */
export function asObject(value: unknown, what: string, usage: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError(`${what} must be an object`, usage);
  return value as Record<string, unknown>;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
}
