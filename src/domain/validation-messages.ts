/**
 * The words of every validation problem zod finds, in one place: a predicate about the field ("must be one of
 * "compensate", "escalate" or "fail"", "is required", "must be a number"), which `sentenceOf` puts after the
 * field's path. zod's own words name its types and internals ("Invalid input", "expected string, received
 * undefined"); these say what the reader should send instead. Installed as zod's error map when this module is
 * loaded (primitives.ts, which every schema of the language is built on, imports it), so no parse can run before
 * it; a message a schema gives itself (a refine's) still wins.
 */
import { z } from "zod";

type RawIssue = z.core.$ZodRawIssue;
type Issue = z.core.$ZodIssue;

/** Messages that read as a predicate, so the field's path can be their subject. */
const PREDICATE = /^(must|is|has|cannot|needs) /;

/**
 * One problem as a sentence: `definition.onFailure must be one of …`, or `path: message` for a message that is a
 * sentence of its own. An issue at the root is about `whole`: the request, or a queue's message.
 */
export function sentenceOf(path: readonly PropertyKey[], message: string, whole = "the request"): string {
  const subject = path.map(String).join(".");
  if (PREDICATE.test(message)) return `${subject === "" ? whole : subject} ${message}`;
  return subject === "" ? message : `${subject}: ${message}`;
}

/** zod's error map: the predicate for an issue, or undefined to leave zod's words (a kind not worded here). */
export function issueMessage(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      return wrongType(issue.expected, issue.input);
    case "invalid_value":
      return `must be ${oneOf(issue.values)}`;
    case "invalid_union":
      return unionMessage(issue);
    case "too_small":
      return bound("at least", "greater than", issue.origin, issue.minimum, issue);
    case "too_big":
      return bound("at most", "less than", issue.origin, issue.maximum, issue);
    case "invalid_format":
      return formatMessage(issue);
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    case "unrecognized_keys":
      return issue.keys.length === 1 ? `has an unknown field ${quote(issue.keys[0])}` : `has unknown fields ${list(issue.keys.map(quote), "and")}`;
    case "invalid_key":
      return "has a key that is not allowed";
    case "invalid_element":
      return "holds a value that is not allowed";
    case "custom":
      return "is not valid";
    default:
      return undefined;
  }
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  bigint: "a whole number",
  boolean: "true or false",
  object: "an object",
  record: "an object",
  array: "an array",
  tuple: "an array",
  null: "null",
  date: "a date",
};

function wrongType(expected: string, input: unknown): string {
  if (input === undefined) return "is required";
  const wanted = TYPE_NAMES[expected] ?? `a ${expected}`;
  // NaN is what a coerced query parameter that is no number becomes: there is nothing more to show.
  if (typeof input === "number" && Number.isNaN(input)) return `must be ${wanted}`;
  if (expected === "int" && typeof input === "number") return `must be a whole number, not ${input}`;
  return `must be ${wanted}, not ${describe(input)}`;
}

/** What was sent: a short value as it is, anything longer by its kind. */
function describe(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "an array";
  if (typeof input === "number" || typeof input === "boolean") return String(input);
  if (typeof input === "string") return "a string";
  return typeof input === "object" ? "an object" : `a ${typeof input}`;
}

function bound(inclusiveWord: string, exclusiveWord: string, origin: string, limit: number | bigint, issue: { inclusive?: boolean; exact?: boolean }): string {
  const word = issue.exact ? "exactly" : issue.inclusive === false ? exclusiveWord : inclusiveWord;
  const n = String(limit);
  switch (origin) {
    case "string":
      return n === "1" && word === "at least" ? "must not be empty" : `must be ${word} ${n} character${n === "1" ? "" : "s"} long`;
    case "array":
    case "set":
      return n === "1" && word === "at least" ? "must not be empty" : `must have ${word} ${n} item${n === "1" ? "" : "s"}`;
    case "date":
      return `must be ${word} ${new Date(Number(limit)).toISOString()}`;
    default:
      return `must be ${word} ${n}`;
  }
}

const FORMAT_NAMES: Record<string, string> = {
  url: "a URL",
  email: "an email address",
  uuid: "a UUID",
  guid: "a UUID",
  datetime: "an ISO 8601 date-time",
  date: "an ISO 8601 date (YYYY-MM-DD)",
  time: "an ISO 8601 time",
  duration: "an ISO 8601 duration",
};

function formatMessage(issue: Extract<RawIssue, { code: "invalid_format" }>): string {
  const { format } = issue;
  if (format === "regex" && typeof issue.pattern === "string") return `must match ${issue.pattern.replace(/^\/(.*)\/[a-z]*$/, "$1")}`;
  if (format === "starts_with") return `must start with ${quote(issue.prefix)}`;
  if (format === "ends_with") return `must end with ${quote(issue.suffix)}`;
  if (format === "includes") return `must contain ${quote(issue.includes)}`;
  return `must be ${FORMAT_NAMES[format] ?? `a valid ${format}`}`;
}

/**
 * A value that fits none of a union's forms. A form that failed below its root got past its type, so the value was
 * meant for it: its first problem is the one to tell. Otherwise each form says what it takes at the root, and a
 * string is told only the values the forms allow (the string was no object by mistake: it was a misspelt value).
 */
function unionMessage(issue: Extract<RawIssue, { code: "invalid_union" }>): string {
  // A discriminated union whose discriminator is none of its values.
  if (Array.isArray(issue.options) && issue.options.length > 0) return `must be ${oneOf(issue.options)}`;
  if (issue.inclusive === false) return "must match exactly one of its forms, not several";
  const meant = issue.errors.find((problems) => problems.some((problem) => problem.path.length > 0));
  const first = meant?.find((problem) => problem.path.length > 0);
  if (first) return sentenceOf(first.path, first.message);
  const roots = issue.errors.map((problems) => problems[0]).filter((problem): problem is Issue => problem !== undefined);
  const values = roots.flatMap((problem) => (problem.code === "invalid_value" ? problem.values : []));
  if (typeof issue.input === "string" && values.length > 0) return `must be ${oneOf(values)}`;
  const forms = roots.map((problem) => (problem.code === "invalid_value" ? oneOf(problem.values) : problem.code === "invalid_type" ? TYPE_NAMES[problem.expected] ?? `a ${problem.expected}` : undefined));
  const known = forms.filter((form): form is string => form !== undefined);
  return known.length > 0 ? `must be ${known.join(", or ")}` : "matches none of the forms it may take";
}

function oneOf(values: readonly unknown[]): string {
  return values.length === 1 ? quote(values[0]) : `one of ${list(values.map(quote), "or")}`;
}

function quote(value: unknown): string {
  return typeof value === "bigint" ? String(value) : (JSON.stringify(value) ?? String(value));
}

/** `a`, `a or b`, `a, b or c` (or with `and`). */
function list(items: readonly string[], conjunction: "or" | "and"): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} ${conjunction} ${items.at(-1)}`;
}

z.config({ customError: issueMessage });
