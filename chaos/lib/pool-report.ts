// The pool phase in the report: how its workflows ended, the tasks and polls the workers' logs show, the worker killed
// holding a task and where its task went, and what Shepherd's restart found in the pool (the wave, the polls open and
// the tasks held at the kill).
import type { PoolRow } from "./api-shapes.ts";
import { tally } from "./checks/check.ts";
import { killFate, pollOutcome } from "./checks/pool.ts";
import type { KillFate } from "./checks/pool.ts";
import type { SoakWorkflow } from "./definitions.ts";
import type { Final } from "./finals.ts";
import { taskName } from "./pool.ts";
import type { PoolRun, PoolWave } from "./pool-driver.ts";
import { handOuts, heldAt } from "./pool-log.ts";
import type { WorkerLog } from "./pool-log.ts";
import type { WorkerKill } from "./pool-workers.ts";
import type { Outage } from "./restart.ts";

/** What the kill of Shepherd found of the pool phase. */
export interface PoolAtRestart {
  /** Polls sent before the kill and not answered by it. */
  pollsOpen: number;
  /** Tasks the live workers had received and not yet ended. */
  tasksHeld: number;
  pending: number | null;
  running: number | null;
}

export interface PoolFigures {
  workflows: number;
  wave: PoolWave;
  outcomes: Record<string, number>;
  handedOut: number;
  /** Hand-outs by attempt: `{1: 58, 2: 4}`. */
  byAttempt: Record<string, number>;
  /** Polls by how they ended (checks/pool.ts), and how many brought tasks. */
  polls: Record<string, number>;
  /** How far past its waitMs an answered poll came, at most (null: none answered). */
  maxPastWaitMs: number | null;
  kill: (WorkerKill & { atMs: number; fate: KillFate }) | null;
  atRestart: PoolAtRestart | null;
  final: PoolRow | null;
  workers: { id: string; polls: number; tasks: number }[];
}

export function poolReport(workflows: readonly SoakWorkflow[], run: PoolRun, finals: readonly Final[], outage: Outage | null, runStart: number): PoolFigures | null {
  if (workflows.length === 0) return null;
  const ids = new Set(workflows.map((wf) => wf.id));
  const polls = run.logs.flatMap((log) => log.polls);
  const answered = polls.filter((p) => p.status !== 0).map((p) => p.end - p.start - p.waitMs);
  const handed = handOuts(run.logs);
  return {
    workflows: workflows.length,
    wave: run.wave,
    outcomes: tally(finals.filter((f) => ids.has(f.id)).map((f) => f.view?.status ?? "unread")),
    handedOut: handed.length,
    byAttempt: tally(handed.map((h) => String(h.attempt))),
    polls: { ...tally(polls.map((p) => pollOutcome(p, outage))), "with tasks": polls.filter((p) => p.tasks.length > 0).length },
    maxPastWaitMs: answered.length ? Math.max(...answered) : null,
    kill: run.kill && { ...run.kill, atMs: run.kill.at - runStart, fate: killFate(run.logs, run.kill) },
    atRestart: outage && atRestart(run, outage),
    final: run.final,
    workers: run.logs.map((log) => ({ id: log.workerId, polls: log.polls.length, tasks: log.tasks.length })),
  };
}

function atRestart(run: PoolRun, outage: Outage): PoolAtRestart {
  // A worker killed before the restart holds its tasks for ever in its log: they were not the restart's to find.
  const live = run.logs.filter((log: WorkerLog) => !(run.kill && run.kill.workerId === log.workerId && run.kill.at < outage.from));
  return {
    pollsOpen: run.logs.flatMap((log) => log.polls).filter((p) => p.start < outage.from && p.end >= outage.from).length,
    tasksHeld: live.reduce((n, log) => n + heldAt(log, outage.from).length, 0),
    pending: run.wave.atKill?.pending ?? null,
    running: run.wave.atKill?.running ?? null,
  };
}

const counts = (obj: Readonly<Record<string, number>>): string => Object.entries(obj).map(([k, n]) => `${k} ${n}`).join(", ") || "none";
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The console's rows for the phase. */
export function poolRows(pool: PoolFigures | null): [string, string][] {
  if (!pool) return [["pool phase (cases 29, 30)", "none (--pool-workflows 0)"]];
  const { wave, kill, atRestart: r, final } = pool;
  const again = kill?.fate.next.map((n) => (n ? `#${n.attempt} to ${n.workerId} after ${seconds(n.afterMs)}` : "never")).join(", ");
  return [
    ["pool phase (cases 29, 30)", `${pool.workflows} workflows × 3 worker steps on one pool, ${pool.workers.length} worker processes${kill ? " (one started after the kill)" : ""}; ${counts(pool.outcomes)}`],
    ["  tasks and polls", `${pool.handedOut} tasks handed out (by attempt ${counts(pool.byAttempt)}); polls ${counts(pool.polls)}; answered at most ${pool.maxPastWaitMs ?? "–"} ms past waitMs`],
    ["  worker killed holding a task", kill ? `${kill.workerId} at +${seconds(kill.atMs)} holding ${kill.fate.held.map(taskName).join(", ") || "nothing"}; handed again ${again || "–"}; ${kill.replacement} in its place` : "none"],
    [
      "  at the restart",
      r ? `wave of ${wave.ids.length} started ${wave.startedBeforeKill ?? "?"} answered before the kill; pool ${r.pending ?? "?"} pending, ${r.running ?? "?"} running; ${r.pollsOpen} polls open, ${r.tasksHeld} tasks held by the workers` : `no restart (wave of ${wave.ids.length} started with the rest)`,
    ],
    ["  pool at the end", final ? `${final.pending} pending, ${final.running} running, ${final.workers.length} workers seen` : "unread"],
  ];
}
