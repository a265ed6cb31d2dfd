// The pool phase's checks (reliability cases 29 and 30): every pool workflow completed (the killed worker's task handed
// again to another worker), one effect per task key, no attempt handed to two polls, and no poll answered later than
// its waitMs + 1 s, a poll the restart cut off, or one the runtime's own lateness held back, being counted apart.
import { isDeepStrictEqual } from "node:util";
import type { RoundTrip } from "../alarms.ts";
import type { SoakWorkflow } from "../definitions.ts";
import type { Final } from "../finals.ts";
import { POOL_STEPS, poolKey, taskName } from "../pool.ts";
import type { TaskRef } from "../pool.ts";
import { handOuts, heldAt } from "../pool-log.ts";
import type { PollLine, WorkerLog } from "../pool-log.ts";
import type { WorkerKill } from "../pool-workers.ts";
import type { RemoteStats } from "../remote-ledger.ts";
import type { Outage } from "../restart.ts";
import { fail, pass } from "./check.ts";
import type { Check, Violation } from "./check.ts";

/** Case 30: a long poll is answered by its waitMs, give or take this much. */
export const POLL_LATE_MS = 1_000;

/** What a killed worker held, and where each of those tasks went next. */
export interface KillFate {
  held: TaskRef[];
  /** Per held task, its next hand-out to another worker (null: none). */
  next: ({ workerId: string; attempt: number; afterMs: number } | null)[];
}

export function killFate(logs: readonly WorkerLog[], kill: WorkerKill): KillFate {
  const killed = logs.find((log) => log.workerId === kill.workerId);
  const held = killed ? heldAt(killed, kill.at) : [];
  const later = handOuts(logs).filter((h) => h.workerId !== kill.workerId && h.at >= kill.at);
  const next = held.map((t) => {
    const found = later.find((h) => h.workflowId === t.workflowId && h.stepId === t.stepId && h.attempt > t.attempt);
    return found ? { workerId: found.workerId, attempt: found.attempt, afterMs: found.at - kill.at } : null;
  });
  return { held, next };
}

/** Every pool workflow completed with every worker step succeeded; the killed worker's tasks were handed out again. */
export function checkPoolCompleted(workflows: readonly SoakWorkflow[], finals: readonly Final[], run: { kill: WorkerKill | null; logs: readonly WorkerLog[] }): Check {
  const name = "every pool workflow completes";
  const byId = new Map(finals.map((f) => [f.id, f.view]));
  const violations: Violation[] = [];
  for (const wf of workflows) {
    const view = byId.get(wf.id) ?? null;
    const steps = POOL_STEPS.map((id) => view?.steps.find((s) => s.id === id));
    if (view?.status !== "completed" || steps.some((s) => s?.status !== "succeeded")) {
      violations.push({ kind: "pool workflow not completed", id: wf.id, status: view?.status ?? null, steps: steps.map((s) => `${s?.id}:${s?.status}#${s?.attempt}`), error: view?.error?.message });
    }
  }
  const completed = workflows.length - violations.length;
  const fate = run.kill ? killFate(run.logs, run.kill) : null;
  violations.push(...killViolations(run.kill, fate, (t) => reportedBeforeDeath(byId.get(t.workflowId), t)));
  const again = fate?.next.flatMap((n) => (n ? [`#${n.attempt} to ${n.workerId} after ${(n.afterMs / 1000).toFixed(1)} s`] : [])) ?? [];
  const killed = run.kill ? `; ${run.kill.workerId} killed holding ${fate?.held.map(taskName).join(", ") || "nothing"}, handed again ${again.join(", ") || "never"}` : "";
  return (violations.length ? fail : pass)(name, `${completed}/${workflows.length} completed${killed}`, { violations: violations.slice(0, 30), kill: run.kill, fate });
}

/**
 * The killed worker's own attempt is the step's last and it succeeded: its report reached Shepherd before the kill,
 * though its log line did not (the kill comes as a worker reports, so its log can lag its last report).
 */
function reportedBeforeDeath(view: Final["view"] | undefined, t: TaskRef): boolean {
  const step = view?.steps.find((s) => s.id === t.stepId);
  return step?.status === "succeeded" && step.attempt === t.attempt;
}

/**
 * Case 29 exercised: a worker was killed holding a task, and each task it held went to another worker's poll, or had
 * been reported by it before it died; at least one of them must have gone to another worker.
 */
function killViolations(kill: WorkerKill | null, fate: KillFate | null, reported: (t: TaskRef) => boolean): Violation[] {
  if (!kill || !fate) return [{ kind: "no worker was killed holding a task (case 29 not exercised)" }];
  if (fate.held.length === 0) return [{ kind: "the killed worker held no task by its log", workerId: kill.workerId }];
  const lost = fate.held.flatMap((t, i) => (fate.next[i] || reported(t) ? [] : [{ kind: "the killed worker's task never handed to another worker", id: t.workflowId, task: taskName(t) }]));
  if (lost.length > 0 || fate.next.some(Boolean)) return lost;
  return [{ kind: "every task the killed worker held had been reported (case 29 not exercised)", workerId: kill.workerId }];
}

/**
 * The remote's ledger has exactly one effect under every step's key `<workflowId>:<stepId>` (at most one for a step
 * that did not succeed), the step's output is that effect, and no other key of a pool workflow reached the remote.
 */
export function checkPoolEffects(workflows: readonly SoakWorkflow[], finals: readonly Final[], remoteStats: RemoteStats): Check {
  const name = "one effect per pool task key";
  const byId = new Map(finals.map((f) => [f.id, f.view]));
  const ids = new Set(workflows.map((wf) => wf.id));
  const planned = new Set(workflows.flatMap((wf) => POOL_STEPS.map((step) => poolKey(wf.id, step))));
  const violations: Violation[] = [];
  let effects = 0;
  for (const wf of workflows) {
    for (const step of byId.get(wf.id)?.steps.filter((s) => POOL_STEPS.some((id) => id === s.id)) ?? []) {
      const record = remoteStats.keys[poolKey(wf.id, step.id)];
      const applied = record?.applied ?? 0;
      effects += applied;
      const succeeded = step.status === "succeeded";
      if (applied > 1 || (succeeded && applied === 0)) violations.push({ kind: applied ? "task key applied more than once" : "succeeded without an effect", id: wf.id, stepId: step.id, applied });
      else if (succeeded && !isDeepStrictEqual(step.output, record?.appliedBody)) violations.push({ kind: "step output is not the effect applied under its key", id: wf.id, stepId: step.id, output: step.output, effect: record?.appliedBody ?? null });
    }
  }
  const stray = Object.values(remoteStats.keys).filter((k) => ids.has(k.workflowId) && (!planned.has(k.key) || !k.wellFormed));
  for (const k of stray.slice(0, 10)) violations.push({ kind: "key not as the contract says", id: k.workflowId, key: k.key, stepId: k.stepId });
  return (violations.length ? fail : pass)(name, `${effects} effects / ${planned.size} task keys; ${violations.length} violation(s)`, { violations: violations.slice(0, 30) });
}

/** No attempt (workflowId, stepId, attempt) came in the answers of two polls, whichever workers sent them. */
export function checkPoolHandOuts(logs: readonly WorkerLog[]): Check {
  const name = "no pool task handed to two polls";
  const byTask = new Map<string, { workerId: string; at: number }[]>();
  const all = handOuts(logs);
  for (const h of all) {
    const key = taskName(h);
    byTask.set(key, [...(byTask.get(key) ?? []), { workerId: h.workerId, at: h.at }]);
  }
  const twice = [...byTask].filter(([, polls]) => polls.length > 1).map(([task, polls]) => ({ kind: "attempt handed to two polls", task, polls }));
  const polls = logs.reduce((n, log) => n + log.polls.length, 0);
  const unreadable = logs.reduce((n, log) => n + log.unreadable, 0);
  const detail = `${all.length} hand-outs of ${byTask.size} attempts in ${polls} polls of ${logs.length} workers; ${twice.length} handed twice${unreadable ? `; ${unreadable} unreadable log line(s)` : ""}`;
  return (twice.length || polls === 0 ? fail : pass)(name, detail, { violations: twice.slice(0, 30) });
}

/** How one poll ended, for case 30: answered (in time or late), cut off by the restart, or unanswered otherwise. */
export function pollOutcome(poll: PollLine, outage: Outage | null): "answered" | "late" | "cut by the restart" | "no answer" {
  const took = poll.end - poll.start;
  if (poll.status !== 0) return took > poll.waitMs + POLL_LATE_MS ? "late" : "answered";
  // A poll already past its waitMs + 1 s when the kill came had hung before it: late, whatever the restart did.
  const cut = outage !== null && poll.end >= outage.from && poll.start <= outage.to && outage.from - poll.start <= poll.waitMs + POLL_LATE_MS;
  return cut ? "cut by the restart" : took > poll.waitMs + POLL_LATE_MS ? "late" : "no answer";
}

/**
 * What the runtime's own lateness was in the run, as the soak saw it: the alarms' most overdue (the sampler's), and
 * the round trips of the sampler's reads through the front door, each [sent, answered] (lib/alarms.ts).
 */
export interface RuntimeLateness {
  alarmsOverdueMs: number;
  roundTrips: readonly RoundTrip[];
}

const NO_RUNTIME_LATENESS: RuntimeLateness = { alarmsOverdueMs: 0, roundTrips: [] };

/** The longest round trip of a read in flight at any time in [from, to] (0: none was). */
export function longestRoundTripIn(trips: readonly RoundTrip[], from: number, to: number): number {
  let longest = 0;
  for (const [sentAt, answeredAt] of trips) if (sentAt <= to && answeredAt >= from) longest = Math.max(longest, answeredAt - sentAt);
  return longest;
}

/**
 * A late poll's allowance for the runtime's lateness: the larger of the alarms' most overdue and the longest round
 * trip of a read in flight during its overtime (from its waitMs to its end), the runtime's queue at that moment.
 */
export function pollAllowance(poll: PollLine, runtime: RuntimeLateness): { roundTripMs: number; allowanceMs: number } {
  const roundTripMs = longestRoundTripIn(runtime.roundTrips, poll.start + poll.waitMs, poll.end);
  return { roundTripMs, allowanceMs: Math.max(runtime.alarmsOverdueMs, roundTripMs) };
}

/**
 * Every poll was answered by its waitMs + 1 s; a poll the restart cut off is counted apart, any other without an
 * answer fails. A poll's end is a timer in the runtime, like an alarm, and its answer then travels out through the
 * front door Worker, which under load is the runtime's queue too: one later than waitMs + 1 s by no more than its
 * allowance (`pollAllowance`) is counted apart, as the runtime's; later than that is the service's, and fails.
 */
export function checkPollTimes(logs: readonly WorkerLog[], outage: Outage | null, runtime: RuntimeLateness = NO_RUNTIME_LATENESS): Check {
  const name = "no poll answered past its waitMs + 1 s";
  const counts: Record<string, number> = { answered: 0, late: 0, "cut by the restart": 0, "no answer": 0 };
  const violations: Violation[] = [];
  let maxOver = -Infinity;
  const excused = { count: 0, roundTripMs: 0 };
  for (const log of logs) {
    for (const poll of log.polls) {
      const outcome = pollOutcome(poll, outage);
      counts[outcome] = (counts[outcome] ?? 0) + 1;
      if (poll.status !== 0) maxOver = Math.max(maxOver, poll.end - poll.start - poll.waitMs);
      if (outcome !== "late" && outcome !== "no answer") continue;
      const facts = { workerId: log.workerId, start: poll.start, tookMs: poll.end - poll.start, waitMs: poll.waitMs, status: poll.status, tasks: poll.tasks.length, error: poll.error };
      if (outcome === "no answer") {
        violations.push({ kind: "poll without an answer outside the restart", ...facts });
        continue;
      }
      const { roundTripMs, allowanceMs } = pollAllowance(poll, runtime);
      if (facts.tookMs > poll.waitMs + POLL_LATE_MS + allowanceMs) {
        violations.push({ kind: "poll answered late", ...facts, alarmsOverdueMs: runtime.alarmsOverdueMs, roundTripMs });
        continue;
      }
      excused.count += 1;
      excused.roundTripMs = Math.max(excused.roundTripMs, roundTripMs);
    }
  }
  const over = Number.isFinite(maxOver) ? `, at most ${Math.round(maxOver)} ms past waitMs` : "";
  const detail = `${counts.answered} answered in time${over}; ${counts["cut by the restart"]} cut by the restart (retried); ${counts.late} late${lateness(excused, runtime)}, ${counts["no answer"]} unanswered otherwise`;
  return (violations.length ? fail : pass)(name, detail, { violations: violations.slice(0, 30), counts });
}

/** How many late polls were within the runtime's own lateness, and the figures that allowed them. */
function lateness(excused: { count: number; roundTripMs: number }, runtime: RuntimeLateness): string {
  if (excused.count === 0) return "";
  const trips = excused.roundTripMs > 0 ? `the front door's round trips up to ${excused.roundTripMs} ms at those moments` : "no read of the sampler in flight at those moments";
  return ` (${excused.count} of them within the runtime's own lateness: alarms up to ${runtime.alarmsOverdueMs} ms overdue, ${trips})`;
}

/** The pool phase's four checks; none when the soak ran no pool workflow. */
export function checkPool(
  workflows: readonly SoakWorkflow[],
  run: { kill: WorkerKill | null; logs: readonly WorkerLog[] },
  finals: readonly Final[],
  remoteStats: RemoteStats,
  timing: { outage: Outage | null; runtime: RuntimeLateness },
): Check[] {
  if (workflows.length === 0) return [];
  return [checkPoolCompleted(workflows, finals, run), checkPoolEffects(workflows, finals, remoteStats), checkPoolHandOuts(run.logs), checkPollTimes(run.logs, timing.outage, timing.runtime)];
}
