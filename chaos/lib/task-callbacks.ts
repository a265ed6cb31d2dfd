// The remote's side of an attempt it answered 202 (contract, "Task tokens"): a job that reports through the
// attempt's task token, `POST /v1/tasks/{token}/heartbeat {"progress"}` and `/complete {"output"}`, as an
// asynchronous service does. Two jobs: one stuck at the same progress that heartbeats on and never completes
// (what `progressMs` must catch), and one whose progress moves on until it completes. Both keep going through
// Shepherd's restart (no answer: try again at the next beat) and stop once Shepherd says the attempt is over
// (401 expired token, 409 stale attempt, 410 ended step) or the remote closes. Each keeps its account on `job`.
import { sleep } from "../../scripts/lib/async.ts";
import { requestJson } from "../../scripts/lib/http-json.ts";
import { errorCode, field } from "./api-shapes.ts";
import { failureName } from "./client.ts";

/** One call of a job on its token, as the remote's stats keep it. */
export interface TaskCall {
  at: number;
  status: number;
  code?: string;
}

/** A job behind a 202: its heartbeats and completions, and what ended it. */
export interface Job {
  attempt: number;
  stuck: boolean;
  acceptedAt: number;
  heartbeats: TaskCall[];
  completions: TaskCall[];
  ended: { at: number; by: string } | null;
}

/** Where a job reports, and whether the remote is closing. */
export interface JobContext {
  shepherdUrl: string | null;
  token: string;
  job: Job;
  closed: () => boolean;
}

interface TaskAnswer {
  status: number;
  code: string | null;
  cancelRequested: boolean;
}

const CALL_TIMEOUT_MS = 3_000;
/** A stuck job stops by itself after this, told or not: the stall must have ended its attempt long before. */
const STUCK_CAP_MS = 60_000;
/** How long a finished job keeps trying to deliver its completion (a restart takes 2–5 s). */
const COMPLETE_FOR_MS = 30_000;
/** Answers that say the attempt is no longer the one running: the job has nobody left to report to. */
const ATTEMPT_OVER = new Set([401, 404, 409, 410]);

/** One call on the token: {status, code, cancelRequested}; status 0 when Shepherd did not answer. */
async function taskCall(shepherdUrl: string | null, token: string, what: string, body: unknown): Promise<TaskAnswer> {
  try {
    const init = { method: "POST", body, timeoutMs: CALL_TIMEOUT_MS };
    const res: { status: number; body: unknown } = await requestJson(`${shepherdUrl}/v1/tasks/${encodeURIComponent(token)}/${what}`, init);
    const code = errorCode(res.body);
    return { status: res.status, code: code === undefined || code === null ? null : String(code), cancelRequested: field(res.body, "cancelRequested") === true };
  } catch (error) {
    return { status: 0, code: failureName(error, "no answer"), cancelRequested: false };
  }
}

/** The call as the job's account keeps it. */
const callRecord = (res: TaskAnswer): TaskCall => ({ at: Date.now(), status: res.status, ...(res.code ? { code: res.code } : {}) });
const answered = (what: string, res: TaskAnswer): string => `${what} answered ${res.status}${res.code ? ` ${res.code}` : ""}`;

/** A heartbeat with `progress`, recorded on the job; true when the attempt is over and the job should stop. */
async function beat(ctx: JobContext, progress: unknown): Promise<boolean> {
  const res = await taskCall(ctx.shepherdUrl, ctx.token, "heartbeat", { progress });
  ctx.job.heartbeats.push(callRecord(res));
  if (!ATTEMPT_OVER.has(res.status) && !res.cancelRequested) return false;
  ctx.job.ended = { at: Date.now(), by: res.cancelRequested ? "cancelRequested" : answered("heartbeat", res) };
  return true;
}

/**
 * Heartbeats every `everyMs` with the same `progress` and never completes, until Shepherd ends the attempt
 * (the stall), the remote closes, or STUCK_CAP_MS.
 */
export async function runStuckJob(ctx: JobContext & { progress: unknown; everyMs: number }): Promise<void> {
  const { job, progress, everyMs, closed } = ctx;
  for (const end = Date.now() + STUCK_CAP_MS; Date.now() < end && !closed(); ) {
    await sleep(everyMs);
    if (await beat(ctx, progress)) return;
  }
  job.ended = { at: Date.now(), by: closed() ? "remote closed" : `gave up after ${STUCK_CAP_MS} ms` };
}

/**
 * Heartbeats every `everyMs` with each of `percents` in turn (progress that moves), then applies the effect
 * (`finish()`, once per key) and completes with it, retrying a completion that got no answer.
 */
export async function runMovingJob(ctx: JobContext & { percents: readonly number[]; everyMs: number; finish: () => unknown }): Promise<void> {
  const { shepherdUrl, token, job, percents, everyMs, finish, closed } = ctx;
  for (const percent of percents) {
    await sleep(everyMs);
    if (closed()) {
      job.ended = { at: Date.now(), by: "remote closed" };
      return;
    }
    if (await beat(ctx, { percent, stage: "working" })) return;
  }
  const output = finish();
  for (const end = Date.now() + COMPLETE_FOR_MS; !closed(); ) {
    const res = await taskCall(shepherdUrl, token, "complete", { output });
    job.completions.push(callRecord(res));
    if (res.status === 200 || ATTEMPT_OVER.has(res.status) || Date.now() >= end) {
      job.ended = { at: Date.now(), by: answered("complete", res) };
      return;
    }
    await sleep(everyMs);
  }
  job.ended = { at: Date.now(), by: "remote closed" };
}
