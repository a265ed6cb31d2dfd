// The pool case's workers: async loops in the bench process, each a worker as a user would write one. It
// long-polls its pool, completes every task it took at once with a small output, and polls again, until the
// run stops it. What they went through (polls, empty answers, refused reports) is counted, not thrown: a
// worker that meets an error waits a moment and polls again, as a real one would.
/* global setTimeout, clearTimeout, AbortController */
import { errorMessage } from "../../scripts/lib/json.ts";
import type { PoolApi, PoolTask } from "./engines/engine.ts";

/** After a poll that failed without a Retry-After: a pause, so an overloaded engine is not hammered. */
const ERROR_PAUSE_MS = 200;

export interface WorkerOptions {
  pool: string;
  workers: number;
  /** Each poll's waitMs (the long poll). */
  waitMs: number;
  /** Each poll's max: the most tasks it takes. */
  max: number;
}

/** What the workers went through. */
export interface WorkerTally {
  polls: number;
  /** Polls that came back after their waitMs with no task. */
  emptyPolls: number;
  /** Polls that failed: no answer, or not a 200. */
  pollErrors: number;
  tasks: number;
  completed: number;
  /** Reports answered other than 200 (a 409 for an attempt that moved on), or not answered. */
  completeErrors: number;
  firstError: string | undefined;
}

export interface Workers {
  tally: WorkerTally;
  /** Ends every loop: polls in flight are abandoned, reports in flight are waited for. */
  stop(): Promise<void>;
}

export function newWorkerTally(): WorkerTally {
  return { polls: 0, emptyPolls: 0, pollErrors: 0, tasks: 0, completed: 0, completeErrors: 0, firstError: undefined };
}

/** Starts `workers` loops on the pool; `onCompleted` hears of every task whose report was answered 200. */
export function startWorkers(api: PoolApi, options: WorkerOptions, onCompleted: (task: PoolTask) => void): Workers {
  const tally = newWorkerTally();
  const stopping = new AbortController();
  const loops = Array.from({ length: options.workers }, (_, index) =>
    workerLoop(api, { ...options, workerId: `bench-worker-${index + 1}` }, { tally, onCompleted, signal: stopping.signal }));
  return {
    tally,
    async stop() {
      stopping.abort();
      await Promise.all(loops);
    },
  };
}

interface LoopShared {
  tally: WorkerTally;
  onCompleted: (task: PoolTask) => void;
  signal: AbortSignal;
}

/** One worker: poll, complete what it took (all at once), poll again, until stopped. */
async function workerLoop(api: PoolApi, { pool, workerId, waitMs, max }: Omit<WorkerOptions, "workers"> & { workerId: string }, shared: LoopShared): Promise<void> {
  const { tally, signal } = shared;
  while (!signal.aborted) {
    tally.polls++;
    const answer = await api.poll({ pool, workerId, waitMs, max }, signal).catch((error: unknown) => ({ status: 0, tasks: [], retryAfterS: undefined, error: errorMessage(error) }));
    if (signal.aborted) return;
    if (answer.status !== 200) {
      tally.pollErrors++;
      tally.firstError ??= `poll: ${answer.status || "no answer"} ${answer.error ?? ""}`.trim();
      await pause(answer.retryAfterS !== undefined ? answer.retryAfterS * 1000 : ERROR_PAUSE_MS, signal);
      continue;
    }
    if (answer.tasks.length === 0) tally.emptyPolls++;
    tally.tasks += answer.tasks.length;
    await Promise.all(answer.tasks.map((task) => completeTask(api, task, workerId, shared)));
  }
}

/** The task's report, at once, with a small output; a refused or unanswered report is counted, not retried. */
async function completeTask(api: PoolApi, task: PoolTask, workerId: string, { tally, onCompleted }: LoopShared): Promise<void> {
  const answer = await api.complete(task.token, { ok: true, worker: workerId }).catch((error: unknown) => ({ status: 0, error: errorMessage(error) }));
  if (answer.status === 200) {
    tally.completed++;
    onCompleted(task);
    return;
  }
  tally.completeErrors++;
  tally.firstError ??= `complete ${task.workflowId}/${task.stepId}#${task.attempt}: ${answer.status || "no answer"} ${answer.error ?? ""}`.trim();
}

/** A sleep that stop() cuts short. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
