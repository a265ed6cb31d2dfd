// The worker loop's public shapes: the task a pool hands out (as POST /v1/pools/{pool}/tasks/poll answers it), what
// a handler gets and returns, the loop's options and the events it tells its owner about.

/** One attempt of a `worker` step (or of its compensation), handed to exactly one poll: the pool's own shape. */
export type { WorkerTask } from "../pools/pool-types";
import type { WorkerTask } from "../pools/pool-types";

/** Why a running handler's signal was aborted; the attempt is no longer the worker's to report. */
export type AbortCause = "cancel_requested" | "not_current" | "token_expired" | "deadline_passed";

/** The `reason` of a handler's aborted signal. */
export class TaskAbortedError extends Error {
  override readonly name = "TaskAbortedError";

  constructor(readonly code: AbortCause) {
    super(ABORT_MESSAGES[code]);
  }
}

const ABORT_MESSAGES: Record<AbortCause, string> = {
  cancel_requested: "the service asked to cancel the attempt",
  not_current: "the attempt is no longer current (the service retried or ended it)",
  token_expired: "the attempt's task token has expired",
  deadline_passed: "the attempt's start-to-close deadline passed",
};

export interface TaskContext {
  /** Aborted when the attempt is no longer the worker's: cancelled, superseded, expired or past its deadline. */
  signal: AbortSignal;
  /** Sent with the next heartbeat; the supervisor's stall deadline (`progressMs`) restarts when it changes. */
  progress(value: unknown): void;
}

/**
 * Does one task. What it returns (JSON) is the step's output; what it throws fails the attempt, retryably unless
 * the error has `retryable: false`.
 */
export type TaskHandler = (task: WorkerTask, context: TaskContext) => unknown;

export interface WorkerOptions {
  pool: string;
  handler: TaskHandler;
  /** Handlers running at once; each poll asks for the slots that are free. Default 1. */
  concurrency?: number;
  /** How the worker shows in GET /v1/pools. Default a random `w-…` id. */
  workerId?: string;
  /** How long one poll waits for a task, 0–60 000 ms. Default 20 000. */
  waitMs?: number;
  /** How often a running task heartbeats; never less often than a third of the task's own heartbeatMs, the default. */
  heartbeatMs?: number;
  /** Aborting it stops the worker as `stop()` does (gracefully: the poll in flight is answered first). */
  signal?: AbortSignal;
  /** The wait after a failed poll: full jitter under a ceiling doubling from `initialMs` to `maxMs`. Default 1 000 to 30 000 ms. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Told what the loop does, for logs; never awaited, and what it throws is ignored. */
  onEvent?: (event: WorkerEvent) => void;
}

export type WorkerEvent =
  | { type: "task_started"; task: WorkerTask }
  | { type: "task_completed"; task: WorkerTask; durationMs: number }
  | { type: "task_failed"; task: WorkerTask; durationMs: number; error: { message: string; retryable: boolean } }
  | { type: "task_abandoned"; task: WorkerTask; cause: AbortCause }
  | { type: "report_failed"; task: WorkerTask; error: unknown }
  | { type: "heartbeat_failed"; task: WorkerTask; error: unknown }
  | { type: "poll_failed"; error: unknown; retryInMs: number };

export interface WorkerHandle {
  /**
   * Stops polling, and resolves once the running handlers have finished and reported. The poll in flight is answered
   * first (within `waitMs`) and a task it brings is run: the service hands a task to a poll whose caller has gone all
   * the same, where it would wait out its heartbeat deadline and cost an attempt. `abandonPoll: true` ends that poll
   * at once, for a stop that cannot wait.
   */
  stop(options?: { abandonPoll?: boolean }): Promise<void>;
  /** Settles when the worker has stopped: resolves after stop() or the signal, rejects when the service refused the poll for good (a bad token, a bad pool name). */
  readonly done: Promise<void>;
}
