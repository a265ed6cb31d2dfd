// What a pool worker (chaos/pool-worker.ts) writes to its log, one JSON line each: every poll as it ended (with the
// tasks it received) and every task as it ended (its heartbeats, its effect and its report). The checks read the
// polls; the report reads both. Each line is appended synchronously before the worker goes on, so a worker that is
// SIGKILLed leaves every poll it saw answered.
import type { TaskRef } from "./pool.ts";

/** One long poll: when it was sent and answered (epoch ms), what it asked, the answer's status (0: none came). */
export interface PollLine {
  type: "poll";
  workerId: string;
  start: number;
  end: number;
  waitMs: number;
  max: number;
  status: number;
  /** Why no answer came (ECONNREFUSED, TimeoutError, …). */
  error?: string;
  tasks: TaskRef[];
}

/** The status of one call on a task's token, or of the effect's request (0: no answer). */
export interface TaskLine extends TaskRef {
  type: "task";
  workerId: string;
  took: number;
  end: number;
  heartbeats: number[];
  /** The remote's answer to the effect (null: the attempt was over before it was applied). */
  effect: number | null;
  report: { what: "complete" | "fail" | "none"; statuses: number[] };
}

export type WorkerLine = PollLine | TaskLine;

/** Everything one worker process logged. */
export interface WorkerLog {
  workerId: string;
  polls: PollLine[];
  tasks: TaskLine[];
  /** Lines that were not JSON of either kind (a line cut by the SIGKILL would be one). */
  unreadable: number;
}

const isTaskRef = (v: Record<string, unknown>): boolean => typeof v.workflowId === "string" && typeof v.stepId === "string" && typeof v.attempt === "number";

function isPollLine(v: Record<string, unknown>): boolean {
  return v.type === "poll" && typeof v.start === "number" && typeof v.end === "number" && typeof v.waitMs === "number" && typeof v.status === "number" && Array.isArray(v.tasks) && v.tasks.every((t) => typeof t === "object" && t !== null && isTaskRef(t as Record<string, unknown>));
}

const isTaskLine = (v: Record<string, unknown>): boolean => v.type === "task" && isTaskRef(v) && typeof v.took === "number" && typeof v.end === "number";

/** A worker's log file's text, line by line. */
export function readWorkerLog(workerId: string, text: string): WorkerLog {
  const log: WorkerLog = { workerId, polls: [], tasks: [], unreadable: 0 };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      log.unreadable += 1;
      continue;
    }
    const v = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
    if (isPollLine(v)) log.polls.push(v as unknown as PollLine);
    else if (isTaskLine(v)) log.tasks.push(v as unknown as TaskLine);
    else log.unreadable += 1;
  }
  return log;
}

/** One task handed to one poll: which worker's, and when its answer came. */
export interface HandOut extends TaskRef {
  workerId: string;
  at: number;
}

/** Every task every poll received, in the order they were answered. */
export function handOuts(logs: readonly WorkerLog[]): HandOut[] {
  const all = logs.flatMap((log) => log.polls.flatMap((poll) => poll.tasks.map((t) => ({ ...t, workerId: log.workerId, at: poll.end }))));
  return all.sort((a, b) => a.at - b.at);
}

/** The tasks a worker had received and not ended (no task line) by `at`: what it held. */
export function heldAt(log: WorkerLog, at: number): TaskRef[] {
  const ended = new Set(log.tasks.filter((t) => t.end <= at).map((t) => `${t.workflowId}|${t.stepId}|${t.attempt}`));
  return log.polls.filter((p) => p.end <= at).flatMap((p) => p.tasks).filter((t) => !ended.has(`${t.workflowId}|${t.stepId}|${t.attempt}`));
}
