// The bulk phase in the report: how its workflows ended, the job's course (created, what the kill found, done) and
// its pace, and how the front door answered while it ran.
import type { BulkRun, JobSample } from "./bulk-driver.ts";
import { tally } from "./checks/check.ts";
import { AFTER_OUTAGE_GRACE_MS } from "./checks/bulk.ts";
import type { SoakWorkflow } from "./definitions.ts";
import type { Final } from "./finals.ts";
import { distribution } from "./metrics.ts";
import type { Distribution } from "./metrics.ts";
import type { Outage } from "./restart.ts";

export interface BulkFigures {
  workflows: number;
  outcomes: Record<string, number>;
  /** Since the run's start: the family listed, the job created and done (null: never). */
  listedAtMs: number | null;
  job: { id: string; createdAtMs: number; endedAtMs: number | null; matched: number; done: number; failed: number } | null;
  /** Workflows acted on per second, from its creation to its end. */
  perSecond: number | null;
  atKill: JobSample["job"];
  frontDoor: { asked: number; unanswered: number; duringRestart: number; latencyMs: Distribution };
}

export function bulkReport(workflows: readonly SoakWorkflow[], run: BulkRun, finals: readonly Final[], outage: Outage | null, runStart: number): BulkFigures | null {
  if (workflows.length === 0) return null;
  const ids = new Set(workflows.map((wf) => wf.id));
  const { created, final } = run;
  const endedAt = final?.endedAt ?? null;
  const inOutage = (at: number) => outage !== null && at >= outage.from && at <= outage.to + AFTER_OUTAGE_GRACE_MS;
  const answered = run.probes.filter((p) => p.status === 200);
  return {
    workflows: workflows.length,
    outcomes: tally(finals.filter((f) => ids.has(f.id)).map((f) => f.view?.status ?? "unread")),
    listedAtMs: run.listedAt === null ? null : run.listedAt - runStart,
    job: created && { id: created.id, createdAtMs: created.createdAt - runStart, endedAtMs: endedAt === null ? null : endedAt - runStart, matched: final?.matched ?? 0, done: final?.done ?? 0, failed: final?.failed ?? 0 },
    perSecond: created && final && endedAt !== null ? Math.round(((final.done + final.failed) / Math.max(1, endedAt - created.createdAt)) * 1_000 * 10) / 10 : null,
    atKill: run.atKill?.job ?? null,
    frontDoor: { asked: run.probes.length, unanswered: run.probes.length - answered.length, duringRestart: run.probes.filter((p) => inOutage(p.at)).length, latencyMs: distribution(answered.map((p) => p.ms)) },
  };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The console's rows for the phase. */
export function bulkRows(bulk: BulkFigures | null): [string, string][] {
  if (!bulk) return [["bulk phase (case 34)", "none (--bulk-workflows 0)"]];
  const { job, atKill, frontDoor: f } = bulk;
  const outcomes = Object.entries(bulk.outcomes).map(([k, n]) => `${k} ${n}`).join(", ") || "none";
  const course = job
    ? `created at +${seconds(job.createdAtMs)}, ${job.endedAtMs === null ? "never done" : `done at +${seconds(job.endedAtMs)} (${bulk.perSecond ?? "–"} workflows/s)`}: matched ${job.matched}, done ${job.done}, failed ${job.failed}`
    : "never created";
  return [
    ["bulk phase (case 34)", `${bulk.workflows} waiting workflows cancelled by one bulk job, listed at +${bulk.listedAtMs === null ? "never" : seconds(bulk.listedAtMs)}; ${outcomes}`],
    ["  the job", course],
    ["  at the restart", atKill ? `${atKill.status}: ${atKill.done} done, ${atKill.failed} failed of ${atKill.matched} matched just before the kill` : "the kill did not find it"],
    ["  front door while it ran", `${f.asked - f.unanswered}/${f.asked} answered (${f.duringRestart} during the restart); p50 ${f.latencyMs.p50 ?? "–"} ms, p99 ${f.latencyMs.p99 ?? "–"} ms, max ${f.latencyMs.max ?? "–"} ms`],
  ];
}
