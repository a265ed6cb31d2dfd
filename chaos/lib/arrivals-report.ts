// The arrivals phase in the report: how each door's workflows ended, when the delayed starts fell due against the
// restart and how late they started, what the batches were answered, which start messages the kill caught, the end
// notices (repeats included) and the long polls' asks.
import { ARRIVAL_KINDS } from "./arrivals.ts";
import type { ArrivalsPlan } from "./arrivals.ts";
import type { ArrivalsRun } from "./arrivals-driver.ts";
import { askOutcome, dueAgainst, startAtOf } from "./checks/arrivals.ts";
import { tally } from "./checks/check.ts";
import type { Final } from "./finals.ts";
import type { Outage } from "./restart.ts";

export interface ArrivalsFigures {
  perDoor: number;
  /** Final statuses by door (kind). */
  outcomes: Record<string, Record<string, number>>;
  delayed: { due: Record<string, number>; maxLateMs: number | null; deferred: number };
  batches: { sends: number; requests: number; statuses: Record<string, number> };
  /** The start messages sent at the kill: their workflows made before it, and after (the first copy lost or late). */
  queued: { messages: number; copies: number; atKill: { before: number; after: number } | null };
  notices: { received: number; workflows: number; repeats: number; unverified: number; maxAfterEndMs: number | null };
  longPolls: { polls: number; asks: Record<string, number>; cutByRestart: number };
  /** When the held sends went (ms since the run's start), and whether at the kill. */
  held: { atMs: number | null; atKill: boolean };
}

export function arrivalsReport(plan: ArrivalsPlan, run: ArrivalsRun, finals: readonly Final[], outage: Outage | null, runStart: number): ArrivalsFigures | null {
  if (plan.workflows.length === 0) return null;
  const byId = new Map(finals.map((f) => [f.id, f]));
  const statusOf = (id: string): string => byId.get(id)?.view?.status ?? "unread";
  const outcomes = Object.fromEntries(ARRIVAL_KINDS.map((kind) => [kind, tally(plan.workflows.filter((wf) => wf.kind === kind).map((wf) => statusOf(wf.id)))]));
  const startTimes = run.delayed.map((d) => startAtOf(byId.get(d.id))).filter((at) => at !== null);
  const lateness = run.delayed.flatMap((d) => {
    const f = byId.get(d.id);
    const startAt = startAtOf(f);
    const started = f?.events.find((e) => e.type === "workflow_started");
    return startAt !== null && started ? [started.at - startAt] : [];
  });
  const killMade = run.queued.filter((q) => q.wave === "kill").map((q) => byId.get(q.id)?.view?.createdAt ?? null);
  const afterEnd = run.notices.flatMap((n) => {
    const endedAt = n.workflowId ? byId.get(n.workflowId)?.view?.endedAt : undefined;
    return endedAt === undefined ? [] : [n.at - endedAt];
  });
  const noticed = new Set(run.notices.map((n) => n.workflowId).filter((id) => id !== null));
  const asks = run.longPolls.flatMap((p) => p.asks);
  return {
    perDoor: plan.delayed.length,
    outcomes,
    delayed: {
      due: tally(startTimes.map((at) => dueAgainst(at, outage))),
      maxLateMs: lateness.length ? Math.max(...lateness) : null,
      deferred: run.delayed.filter((d) => byId.get(d.id)?.events.some((e) => e.type === "workflow_start_deferred")).length,
    },
    batches: {
      sends: run.batches.length,
      requests: run.batches.reduce((n, s) => n + s.attempts.length, 0),
      statuses: tally(run.batches.flatMap((s) => s.attempts.flatMap((a) => a.answers?.map((x) => String(x.status)) ?? [`request ${a.status}`]))),
    },
    queued: {
      messages: run.queued.length,
      copies: run.queued.reduce((n, q) => n + q.copies.length, 0),
      atKill: outage ? { before: killMade.filter((at) => at !== null && at < outage.from).length, after: killMade.filter((at) => at !== null && at >= outage.from).length } : null,
    },
    notices: { received: run.notices.length, workflows: noticed.size, repeats: run.notices.length - noticed.size, unverified: run.notices.filter((n) => !n.verified).length, maxAfterEndMs: afterEnd.length ? Math.max(...afterEnd) : null },
    longPolls: { polls: run.longPolls.length, asks: tally(asks.map((a) => askOutcome(a.status))), cutByRestart: asks.filter((a) => a.status === 0).length },
    held: { atMs: run.held.releasedAt === null ? null : run.held.releasedAt - runStart, atKill: run.held.atKill },
  };
}

const counts = (obj: Readonly<Record<string, number>>): string => Object.entries(obj).map(([k, n]) => `${k} ${n}`).join(", ") || "none";
const ms = (value: number | null): string => (value === null ? "–" : `${value} ms`);

/** The console's rows for the phase. */
export function arrivalsRows(figures: ArrivalsFigures | null): [string, string][] {
  if (!figures) return [["arrivals phase", "none (--arrivals 0)"]];
  const { delayed, batches, queued, notices, longPolls, held } = figures;
  const doors = Object.entries(figures.outcomes).map(([kind, outcome]) => `${kind}: ${counts(outcome)}`).join("; ");
  const heldText = held.atMs === null ? "never sent" : `sent at +${(held.atMs / 1000).toFixed(1)} s ${held.atKill ? "just before the kill" : "without waiting for a restart"}`;
  return [
    ["arrivals phase (case 32)", `${figures.perDoor} workflows through each door, each with a signed notify; ${doors}`],
    ["  delayed starts", `due ${counts(delayed.due)}; started at most ${ms(delayed.maxLateMs)} after their time; ${delayed.deferred} deferred by back-pressure; held ones ${heldText}`],
    ["  batches", `${batches.sends} sends in ${batches.requests} requests; item answers ${counts(batches.statuses)}`],
    ["  start messages", `${queued.messages} × 2 copies (${queued.copies} sent)${queued.atKill ? `; of those sent at the kill, ${queued.atKill.before} made before it and ${queued.atKill.after} after` : ""}`],
    ["  end notices", `${notices.received} for ${notices.workflows} workflows (${notices.repeats} repeats), ${notices.unverified} not verified; at most ${ms(notices.maxAfterEndMs)} after the end`],
    ["  result long polls", `${longPolls.polls} polls; asks ${counts(longPolls.asks)} (${longPolls.cutByRestart} cut by the restart)`],
  ];
}
