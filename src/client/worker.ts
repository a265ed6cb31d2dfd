// A pool's worker: polls for as many tasks as it has free slots, runs each (worker-task.ts), backs off when the
// service cannot be reached, and stops gracefully: no poll after stop(), the running handlers finish and report.
import { abortableSleep } from "./abortable-sleep";
import type { WorkerApi } from "./worker-api";
import { backoffMs, DEFAULT_POLL_BACKOFF, isPermanentPollError, type Backoff } from "./worker-policy";
import { runTask, type TaskRunner } from "./worker-task";
import type { WorkerEvent, WorkerHandle, WorkerOptions } from "./worker-types";

/** The API's bounds on a poll. */
const MAX_TASKS_PER_POLL = 100;
const MAX_WAIT_MS = 60_000;
const DEFAULT_WAIT_MS = 20_000;

interface Loop {
  api: WorkerApi;
  pool: string;
  workerId: string;
  waitMs: number;
  concurrency: number;
  backoff: Backoff;
  runner: TaskRunner;
  /** Aborted by stop(): no further poll. */
  stopping: AbortSignal;
  /** Resolves when `stopping` aborts. */
  stopped: Promise<void>;
  /** Aborted by stop({ abandonPoll }): the poll in flight too. */
  abandoning: AbortSignal;
  running: Set<Promise<void>>;
}

/** Starts polling at once; the options are checked first, so a bad one throws here rather than in the loop. */
export function startWorker(api: WorkerApi, options: WorkerOptions, random: () => number): WorkerHandle {
  const stopper = new AbortController();
  const abandoner = new AbortController();
  const loop = loopOf(api, options, random, stopper.signal, abandoner.signal);
  const stopOnSignal = () => stopper.abort();
  if (options.signal?.aborted) stopper.abort();
  options.signal?.addEventListener("abort", stopOnSignal, { once: true });
  // Handlers still finish and report when the loop ends for good (a refused poll), before `done` rejects.
  const done = pollUntilStopped(loop).finally(async () => {
    await Promise.all(loop.running);
    options.signal?.removeEventListener("abort", stopOnSignal);
  });
  return {
    done,
    async stop({ abandonPoll = false } = {}) {
      stopper.abort();
      if (abandonPoll) abandoner.abort();
      await done.catch(() => undefined);
    },
  };
}

function loopOf(api: WorkerApi, options: WorkerOptions, random: () => number, stopping: AbortSignal, abandoning: AbortSignal): Loop {
  return {
    api,
    pool: options.pool,
    workerId: options.workerId ?? `w-${crypto.randomUUID().slice(0, 8)}`,
    waitMs: checkedInteger("waitMs", options.waitMs ?? DEFAULT_WAIT_MS, 0, MAX_WAIT_MS),
    concurrency: checkedInteger("concurrency", options.concurrency ?? 1, 1, Number.MAX_SAFE_INTEGER),
    backoff: { ...DEFAULT_POLL_BACKOFF, ...options.backoff },
    runner: { api, handler: options.handler, heartbeatMs: options.heartbeatMs, emit: safeListener(options.onEvent), random },
    stopping,
    stopped: new Promise((resolve) => stopping.addEventListener("abort", () => resolve(), { once: true })),
    abandoning,
    running: new Set(),
  };
}

async function pollUntilStopped(loop: Loop): Promise<void> {
  let failures = 0;
  while (!loop.stopping.aborted) {
    const free = loop.concurrency - loop.running.size;
    if (free <= 0) {
      await Promise.race([...loop.running, loop.stopped]);
      continue;
    }
    try {
      // A stop lets the poll in flight be answered: the service hands a task to a poll whose caller has gone all the
      // same, and that task would wait out its heartbeat deadline and cost an attempt.
      const tasks = await loop.api.poll(loop.pool, { workerId: loop.workerId, waitMs: loop.waitMs, max: Math.min(free, MAX_TASKS_PER_POLL) }, loop.abandoning);
      failures = 0;
      // Tasks that arrive as the worker stops are run all the same: the service handed them to this worker alone.
      for (const task of tasks) track(loop, runTask(loop.runner, task));
    } catch (error) {
      // A poll that fails once the worker is stopping (stop({ abandonPoll }) ends it) is not asked again.
      if (loop.stopping.aborted) return;
      if (isPermanentPollError(error)) throw error;
      failures += 1;
      const retryInMs = backoffMs(loop.backoff, failures, loop.runner.random());
      loop.runner.emit({ type: "poll_failed", error, retryInMs });
      await abortableSleep(retryInMs, loop.stopping);
    }
  }
}

function track(loop: Loop, run: Promise<void>): void {
  loop.running.add(run);
  void run.finally(() => loop.running.delete(run));
}

/** The owner's listener is for logs: it must not break the loop. */
function safeListener(listener: ((event: WorkerEvent) => void) | undefined): (event: WorkerEvent) => void {
  return (event) => {
    try {
      listener?.(event);
    } catch {
      // Ignored, as the option says.
    }
  };
}

function checkedInteger(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`worker: ${name} must be a whole number from ${min} to ${max} (got ${value})`);
  return value;
}
