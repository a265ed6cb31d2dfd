import { ShepherdApiError } from "../client/index";

/** The exit statuses, documented in `shepherd --help` and the README: scripts branch on them. */
export const EXIT = {
  ok: 0,
  /** The API refused the request (a 4xx). */
  refused: 1,
  /** The command line itself is wrong: nothing was sent. */
  usage: 2,
  /** The service could not be reached, or answered 5xx after the client's retries. */
  unreachable: 3,
  /** `watch` and `result`: the workflow ended, but not completed. */
  workflowUnsuccessful: 4,
  /** `watch`: it stopped before the workflow ended (unattended, at a workflow waiting for an operator; or --timeout). */
  watchStopped: 5,
} as const;

/** A command line that cannot run: an unknown command or flag, a missing argument, an unreadable file. */
export class UsageError extends Error {
  override readonly name = "UsageError";

  /** `usage` is the command's usage line, printed under the message. */
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
  }
}

/** The request never got an answer: refused connection, unknown host, or no answer in time. */
export class UnreachableError extends Error {
  override readonly name = "UnreachableError";

  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(`could not reach ${url}: ${reasonOf(cause)}`, { cause });
  }
}

/** undici says "fetch failed" and keeps the reason (ECONNREFUSED, ENOTFOUND, …) in `cause`. */
function reasonOf(error: unknown): string {
  if (error instanceof DOMException && error.name === "TimeoutError") return "no answer in time";
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  return cause instanceof Error && cause.message !== "" ? cause.message : error.message;
}

/** What to print on stderr for a failure, and the exit status; rethrows what is a bug rather than a failure. */
export function describeFailure(error: unknown, json: boolean): { status: number; text: string } {
  if (error instanceof UsageError) {
    return { status: EXIT.usage, text: [`error: ${error.message}`, ...(error.usage ? [`usage: ${error.usage}`] : [])].join("\n") };
  }
  if (error instanceof UnreachableError) {
    const body = { error: { code: "unreachable", message: error.message } };
    return { status: EXIT.unreachable, text: json ? JSON.stringify(body) : `error: ${error.message}` };
  }
  if (error instanceof ShepherdApiError) return describeApiError(error, json);
  throw error;
}

/** A 5xx reached us only after the client's retries: the service is unwell, which is not the request's fault. */
function describeApiError(error: ShepherdApiError, json: boolean): { status: number; text: string } {
  const status = error.status >= 500 ? EXIT.unreachable : EXIT.refused;
  const body = { error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } };
  if (json) return { status, text: JSON.stringify(body) };
  const lines = [`error: ${error.code}: ${error.message}${error.status >= 500 ? ` (HTTP ${error.status}, after retries)` : ""}`];
  // The API's message often quotes its first details already.
  const details = (error.details ?? []).map(describeDetail).filter((detail) => !error.message.includes(detail));
  for (const detail of details) lines.push(`  ${detail}`);
  return { status, text: lines.join("\n") };
}

/** A validation detail is `{path, message}`; anything else is shown as JSON. */
function describeDetail(detail: unknown): string {
  if (typeof detail === "object" && detail !== null && "message" in detail) {
    const path = "path" in detail && Array.isArray(detail.path) ? detail.path.join(".") : "";
    return path === "" ? String(detail.message) : `${path}: ${String(detail.message)}`;
  }
  return JSON.stringify(detail);
}
