// The worker loop's decisions, pure: how often to heartbeat, how long to back off, when a handler's time is up, and
// what each failure means. The loop (worker.ts) and a task's run (worker-task.ts) only perform them.
import { ShepherdApiError } from "./errors";
import type { AbortCause } from "./worker-types";

/** Heartbeats per heartbeat interval of the task, so one lost or slow heartbeat is not a missed deadline. */
const HEARTBEATS_PER_INTERVAL = 3;
/** A task with a tiny heartbeatMs still gets heartbeats a service can keep up with. */
const MIN_HEARTBEAT_EVERY_MS = 50;

/** How often a running task heartbeats: as asked, but never less often than a third of the task's heartbeatMs. */
export function heartbeatEveryMs(taskHeartbeatMs: number, askedMs?: number): number {
  const needed = Math.floor(taskHeartbeatMs / HEARTBEATS_PER_INTERVAL);
  return Math.max(MIN_HEARTBEAT_EVERY_MS, askedMs === undefined ? needed : Math.min(askedMs, needed));
}

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/** After a failed poll. A restarting service is back within seconds; a long outage is asked about twice a minute. */
export const DEFAULT_POLL_BACKOFF: Backoff = { initialMs: 1_000, maxMs: 30_000 };
/** Between tries of a report: shorter, since the attempt's deadline bounds how long a report can still land. */
export const REPORT_BACKOFF: Backoff = { initialMs: 250, maxMs: 5_000 };

/**
 * The wait before try `failures + 1`: full jitter under a ceiling that doubles per failure, so workers that lost the
 * service together do not all come back in the same instant.
 */
export function backoffMs(backoff: Backoff, failures: number, random: number): number {
  const ceiling = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.max(0, failures - 1));
  return Math.floor(random * ceiling);
}

/**
 * When a handler's time is up: the service's `deadlineAt`, or `startToCloseMs` after the task arrived when that is
 * sooner. The second bound holds when this machine's clock runs behind the service's.
 */
export function deadlineInMs(task: { deadlineAt: number; startToCloseMs: number }, receivedAt: number, now: number): number {
  return Math.max(0, Math.min(task.deadlineAt, receivedAt + task.startToCloseMs) - now);
}

/**
 * A poll the service refused for good: a bad token, a bad pool name or body. Another poll gets the same answer, so
 * the loop ends instead of asking forever. 408 and 429 are about timing, and a 5xx or a lost connection (a restart,
 * a deploy) passes: those are backed off and asked again.
 */
export function isPermanentPollError(error: unknown): boolean {
  return error instanceof ShepherdApiError && error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429;
}

/**
 * What a refused heartbeat or report says about the attempt: 401 is its token expired (the deadline passed), 404,
 * 409 and 410 that the service retried or ended it. Either way no report of it is taken any more.
 */
export function abortCauseOf(error: unknown): AbortCause | undefined {
  if (!(error instanceof ShepherdApiError)) return undefined;
  if (error.status === 401) return "token_expired";
  if ([404, 409, 410].includes(error.status)) return "not_current";
  return undefined;
}

/** A failure worth sending the report again for: no answer, a 5xx, or the rate limits the client already retried. */
export function isTransientReportError(error: unknown): boolean {
  if (!(error instanceof ShepherdApiError)) return true;
  return error.status >= 500 || error.status === 408 || error.status === 429;
}

/** The service validates the output (JSON, bounded in size): one it refused will be refused again. */
export function isRefusedOutput(error: unknown): boolean {
  return error instanceof ShepherdApiError && (error.status === 400 || error.status === 413);
}

/** The API's bounds on a failure's message. */
const MAX_MESSAGE_CHARS = 4_096;

/** The `fail` body for what a handler threw: retryable unless the error says `retryable: false`. */
export function failureOf(thrown: unknown): { message: string; retryable: boolean } {
  const message = thrown instanceof Error ? thrown.message || thrown.name : String(thrown);
  const retryable = !(typeof thrown === "object" && thrown !== null && "retryable" in thrown && thrown.retryable === false);
  return { message: (message || "the handler failed").slice(0, MAX_MESSAGE_CHARS), retryable };
}
