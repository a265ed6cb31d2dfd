import { HttpActionSchema } from "../../domain/language/actions";
import { jsonLimitProblem, LIMITS } from "../../domain/language/limits";
import { classifyHttpStatus, type RetryRule, type StatusRules } from "../../domain/machine/remote-outcome";
import type { ClaimedTask } from "../../domain/machine";
import type { AttemptReport } from "../../domain/machine/task-message";
import { checkTarget, type TargetPolicy } from "../../domain/security/target-policy";
import type { ActionType } from "./action-type";
import { readCapped, receivedResponse, sentRequest, type ReadBody } from "./http-exchange";

/** A step's output is stored and templated into later steps, so a remote cannot hand back more than this. */
export const MAX_RESPONSE_BYTES = LIMITS.payloadBytes;
const MAX_REDIRECTS = 5;
const BODYLESS_METHODS = new Set(["GET", "DELETE"]);

/** The `http` action: a request to the remote, answered at once or accepted (202) and reported through the task token. */
export const httpActionType: ActionType<"http"> = {
  schema: HttpActionSchema,
  perform: (task, token, policy, signal) => performHttpAction(task, token, policy, signal),
};

/** Performs one attempt of an `http` action and says how it went; never throws for a remote's behaviour. */
export async function performHttpAction(
  task: ClaimedTask,
  token: string,
  policy: TargetPolicy,
  signal: AbortSignal,
): Promise<AttemptReport> {
  const { action } = task;
  if (action.type !== "http") return failed(`an http agent cannot perform a ${action.type} action`, false);
  const method = action.method ?? "POST";
  const headers = new Headers(action.headers);
  headers.set("Idempotency-Key", task.idempotencyKey);
  headers.set("Shepherd-Workflow-Id", task.workflowId);
  headers.set("Shepherd-Step-Id", task.stepId);
  headers.set("Shepherd-Attempt", String(task.attempt));
  headers.set("Shepherd-Task-Token", token);
  const progress = progressHeader(task.progress);
  if (progress) headers.set("Shepherd-Progress", progress);
  const body = !BODYLESS_METHODS.has(method) && action.body !== undefined ? JSON.stringify(action.body) : undefined;
  if (body !== undefined) headers.set("Content-Type", "application/json");
  const init: RequestInit = { method, headers, signal, redirect: "manual", ...(body === undefined ? {} : { body }) };

  let url = action.url;
  // What the attempt sent: the last hop's URL, as a redirect moved it.
  const sent = () => sentRequest(method, url, headers, body);
  try {
    for (let hop = 0; ; hop++) {
      const refusal = checkTarget(url, policy);
      if (refusal) return { ...failed(`target refused: ${refusal}`, false), exchange: { request: sent() } };
      const response = await fetch(url, init);
      const location = response.headers.get("Location");
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        if (hop >= MAX_REDIRECTS) return { ...failed(`more than ${MAX_REDIRECTS} redirects`, false), exchange: { request: sent(), response: receivedResponse(response, NO_BODY) } };
        url = new URL(location, url).toString();
        continue;
      }
      const read = await readCapped(response, MAX_RESPONSE_BYTES);
      return { ...outcomeOf(response, read, task.statusRules), exchange: { request: sent(), response: receivedResponse(response, read) } };
    }
  } catch (error) {
    const report = signal.aborted ? failed(`request aborted: ${String(signal.reason ?? "deadline passed")}`, true) : failed(`network error: ${error instanceof Error ? error.message : String(error)}`, true);
    return { ...report, exchange: { request: sent() } };
  }
}

const NO_BODY = { bytes: new Uint8Array(), complete: true };

function outcomeOf(response: Response, read: ReadBody, rules: StatusRules | undefined): AttemptReport {
  const outcome = classifyHttpStatus(response.status, response.headers.get("Retry-After"), Date.now(), rules);
  if (!read.complete) return failed(`response body exceeds ${MAX_RESPONSE_BYTES} bytes`, true, response.status);
  const text = new TextDecoder().decode(read.bytes);
  switch (outcome.kind) {
    case "succeeded": {
      const output = parseOutput(text);
      const problem = jsonLimitProblem(output, LIMITS.payloadBytes);
      return problem ? failed(`response body cannot be stored: ${problem}`, true, response.status) : { type: "succeeded", output, status: response.status };
    }
    case "accepted":
      return { type: "accepted" };
    case "transient": {
      const report = failed(`remote answered ${response.status}${summary(text)}`, true, response.status, outcome.rule);
      return outcome.retryAfterMs === undefined ? report : { ...report, retryAfterMs: outcome.retryAfterMs };
    }
    case "permanent":
      return failed(`remote answered ${response.status}${summary(text)}`, false, response.status, outcome.rule);
  }
}

/** A failure this agent classified: by the remote's status (and the step's lists), else by its own default. */
function failed(message: string, retryable: boolean, status?: number, rule: RetryRule = "default"): AttemptReport & { type: "failed" } {
  return { type: "failed", error: { message, retryable, ...(status === undefined ? {} : { status }), rule } };
}

function summary(text: string): string {
  const trimmed = text.trim();
  return trimmed ? `: ${trimmed.slice(0, 200)}` : "";
}

function parseOutput(text: string): unknown {
  if (text.trim() === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}

/** Longest `Shepherd-Progress` header; larger details stay readable in the workflow (GET), not in the request. */
const MAX_PROGRESS_HEADER = 8 * 1024;

/**
 * The last heartbeat details of an earlier attempt, so a retry can resume where it stopped (Temporal's
 * heartbeat details). JSON with every non-ASCII character escaped, since header values are bytes.
 */
function progressHeader(progress: unknown): string | undefined {
  if (progress === undefined) return undefined;
  const text = JSON.stringify(progress).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return text.length <= MAX_PROGRESS_HEADER ? text : undefined;
}
