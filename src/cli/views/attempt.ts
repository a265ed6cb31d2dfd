import type { AttemptDetail } from "../api-types";
import { duration, fields, time } from "../format";

type Request = NonNullable<AttemptDetail["request"]>;
type Response = NonNullable<AttemptDetail["response"]>;
type Body = NonNullable<Request["body"]>;

/** `shepherd attempt`: the attempt's fields, then what it sent (→) and what came back (←), verify's call first. */
export function attemptLines(attempt: AttemptDetail): string[] {
  const took = attempt.endedAt === undefined ? undefined : `${time(attempt.endedAt)} (after ${duration(attempt.endedAt - (attempt.startedAt ?? attempt.scheduledAt))})`;
  const error = attempt.error && `${attempt.error.message}${attempt.error.rule ? ` (${attempt.error.retryable ? "retryable" : "not retried"}: ${attempt.error.rule})` : ""}`;
  const head = fields([
    ["attempt", `${attempt.n} of ${attempt.stepId} (${attempt.kind}) in ${attempt.workflowId}`],
    ["status", attempt.status],
    ["started", attempt.startedAt === undefined ? undefined : time(attempt.startedAt)],
    ["ended", took],
    ["error", error],
  ]);
  const verify = attempt.verify ? ["", "verify, asked first:", ...exchangeLines(attempt.verify.request, attempt.verify.response)] : [];
  const own = attempt.request ? ["", ...exchangeLines(attempt.request, attempt.response)] : attempt.verify ? [] : ["", "nothing recorded of what it sent (still running, never reported, or older than the step's latest kept)"];
  return [...head, ...verify, ...own];
}

function exchangeLines(request: Request, response: Response | undefined): string[] {
  const target = request.pool === undefined ? `${request.method ?? ""} ${request.url ?? ""}`.trim() : `task handed to pool ${request.pool}`;
  const answer = response === undefined ? ["← no answer"] : [`← ${response.status ?? "reported"}`, ...headerLines(response.headers), ...bodyLines(response.body)];
  return [`→ ${target}`, ...headerLines(request.headers), ...bodyLines(request.body), ...answer];
}

function headerLines(headers: Record<string, string> | undefined): string[] {
  return Object.entries(headers ?? {}).map(([name, value]) => `  ${name}: ${value}`);
}

/** The body, pretty when it is JSON; a cut body says how much of it this is. */
function bodyLines(body: Body | undefined): string[] {
  if (!body) return [];
  const lines = pretty(body.text).split("\n").map((line) => `  ${line}`);
  return body.truncated ? [...lines, `  … (the first ${new TextEncoder().encode(body.text).byteLength} of ${body.bytes} bytes)`] : lines;
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
