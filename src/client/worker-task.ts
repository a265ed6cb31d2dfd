// One task of a worker, from its handler's start to its report: heartbeats while the handler runs, the handler's
// signal aborted when the attempt is no longer the worker's, then complete or fail.
import { abortableSleep } from "./abortable-sleep";
import type { WorkerApi } from "./worker-api";
import {
  abortCauseOf,
  backoffMs,
  deadlineInMs,
  failureOf,
  heartbeatEveryMs,
  isRefusedOutput,
  isTransientReportError,
  REPORT_BACKOFF,
} from "./worker-policy";
import { TaskAbortedError, type AbortCause, type TaskContext, type TaskHandler, type WorkerEvent, type WorkerTask } from "./worker-types";

export interface TaskRunner {
  api: WorkerApi;
  handler: TaskHandler;
  /** The worker's `heartbeatMs` option, if any. */
  heartbeatMs?: number;
  emit(event: WorkerEvent): void;
  random(): number;
}

type Outcome = { type: "completed"; output: unknown } | { type: "failed"; error: { message: string; retryable: boolean } };

/** Runs one task to its report. Never throws: whatever goes wrong here, the attempt's deadlines on the service cover it. */
export async function runTask(runner: TaskRunner, task: WorkerTask): Promise<void> {
  const receivedAt = Date.now();
  const attempt = watchAttempt(runner, task, receivedAt);
  runner.emit({ type: "task_started", task });
  const outcome = await outcomeOf(runner.handler, task, attempt.context);
  attempt.stop();
  const cause = attempt.abortCause();
  // Every cause means the service takes no report of this attempt any more: sending one would only be refused.
  if (cause !== undefined) return runner.emit({ type: "task_abandoned", task, cause });
  await report(runner, task, outcome, receivedAt);
}

async function outcomeOf(handler: TaskHandler, task: WorkerTask, context: TaskContext): Promise<Outcome> {
  try {
    return { type: "completed", output: await handler(task, context) };
  } catch (error) {
    return { type: "failed", error: failureOf(error) };
  }
}

/** The heartbeats and the deadline of a running attempt, and the signal they abort. */
function watchAttempt(runner: TaskRunner, task: WorkerTask, receivedAt: number) {
  const controller = new AbortController();
  const abort = (cause: AbortCause) => {
    if (!controller.signal.aborted) controller.abort(new TaskAbortedError(cause));
  };
  let progress: { value?: unknown } = {};
  let inFlight = false;
  const beat = () => {
    // A heartbeat still waiting for its answer is not doubled; its own timeout frees the next one.
    if (inFlight || controller.signal.aborted) return;
    inFlight = true;
    runner.api
      .heartbeat(task.token, progress, AbortSignal.timeout(task.heartbeatMs))
      .then(
        ({ cancelRequested }) => cancelRequested && abort("cancel_requested"),
        (error: unknown) => {
          const cause = abortCauseOf(error);
          if (cause === undefined) runner.emit({ type: "heartbeat_failed", task, error });
          else abort(cause);
        },
      )
      .finally(() => (inFlight = false));
  };
  const heartbeats = setInterval(beat, heartbeatEveryMs(task.heartbeatMs, runner.heartbeatMs));
  const deadline = setTimeout(() => abort("deadline_passed"), deadlineInMs(task, receivedAt, Date.now()));
  const context: TaskContext = { signal: controller.signal, progress: (value) => (progress = { value }) };
  return {
    context,
    stop: () => {
      clearInterval(heartbeats);
      clearTimeout(deadline);
    },
    abortCause: (): AbortCause | undefined => (controller.signal.aborted ? (controller.signal.reason as TaskAbortedError).code : undefined),
  };
}

/**
 * Sends the outcome, again after a lost connection or a 5xx (a report is fenced by its attempt, so a second one is
 * harmless) until the attempt's deadline, after which its token is refused anyway.
 */
async function report(runner: TaskRunner, task: WorkerTask, outcome: Outcome, receivedAt: number): Promise<void> {
  const reportBy = Date.now() + deadlineInMs(task, receivedAt, Date.now());
  let current = outcome;
  for (let failures = 1; ; failures += 1) {
    try {
      await send(runner.api, task.token, current);
      return runner.emit(reported(task, current, receivedAt));
    } catch (error) {
      if (current.type === "completed" && isRefusedOutput(error)) {
        current = { type: "failed", error: { message: `the service refused the handler's output: ${(error as Error).message}`, retryable: false } };
        continue;
      }
      const cause = abortCauseOf(error);
      if (cause !== undefined) return runner.emit({ type: "task_abandoned", task, cause });
      const delay = backoffMs(REPORT_BACKOFF, failures, runner.random());
      if (!isTransientReportError(error) || Date.now() + delay >= reportBy) return runner.emit({ type: "report_failed", task, error });
      await abortableSleep(delay);
    }
  }
}

function send(api: WorkerApi, token: string, outcome: Outcome): Promise<void> {
  return outcome.type === "completed" ? api.complete(token, outcome.output) : api.fail(token, outcome.error);
}

function reported(task: WorkerTask, outcome: Outcome, receivedAt: number): WorkerEvent {
  const durationMs = Date.now() - receivedAt;
  return outcome.type === "completed" ? { type: "task_completed", task, durationMs } : { type: "task_failed", task, durationMs, error: outcome.error };
}
