// The bulk phase's checks (reliability case 34): every workflow of the family ended cancelled with exactly one cancel
// in its history, the job's counts added up at every reading and at its end, Shepherd's restart came while the job
// was at work, and the front door answered every question asked of it while the job ran, but during the restart's
// outage.
import type { BulkRun, FrontDoorProbe, JobSample } from "../bulk-driver.ts";
import type { SoakWorkflow } from "../definitions.ts";
import type { Final } from "../finals.ts";
import { distribution } from "../metrics.ts";
import type { Outage } from "../restart.ts";
import { fail, pass } from "./check.ts";
import type { Check, Violation } from "./check.ts";

/** A question asked this soon after Shepherd was healthy again may still meet the restart's tail. */
export const AFTER_OUTAGE_GRACE_MS = 1_000;

export function checkBulk(workflows: readonly SoakWorkflow[], run: BulkRun, finals: readonly Final[], { outage, restartAsked }: { outage: Outage | null; restartAsked: boolean }): Check[] {
  if (workflows.length === 0) return [];
  return [checkCancelledOnce(workflows, finals), checkBulkCounts(run, workflows.length), checkRestartDuringJob(run, outage, restartAsked), checkFrontDoor(run.probes, outage)];
}

const cancelsIn = (final: Final | undefined): number => final?.events.filter((e) => e.type === "operator_action" && (e.data as { action?: unknown } | undefined)?.action === "cancel").length ?? 0;

/** Each workflow of the family ended cancelled, and its history holds exactly one cancel. */
export function checkCancelledOnce(workflows: readonly SoakWorkflow[], finals: readonly Final[]): Check {
  const name = "bulk job: each matching workflow cancelled exactly once";
  const byId = new Map(finals.map((f) => [f.id, f]));
  const violations: Violation[] = [];
  for (const wf of workflows) {
    const final = byId.get(wf.id);
    const cancels = cancelsIn(final);
    const status = final?.view?.status ?? null;
    if (status !== "cancelled") violations.push({ kind: "not cancelled", id: wf.id, status, cancels });
    else if (cancels !== 1) violations.push({ kind: cancels === 0 ? "cancelled with no cancel in its history" : "cancelled more than once", id: wf.id, cancels });
  }
  const once = workflows.length - violations.length;
  return (violations.length ? fail : pass)(name, `${once}/${workflows.length} cancelled with one cancel in the history`, { violations: violations.slice(0, 30) });
}

/**
 * The job ended done with every workflow of the family matched and acted on once: matched = the family, done +
 * failed = matched, nothing failed; and no reading ever went back or counted more than it matched.
 */
export function checkBulkCounts(run: BulkRun, expected: number): Check {
  const name = "bulk job: counts add up";
  const violations: Violation[] = [];
  const final = run.final;
  if (!run.created) violations.push({ kind: "the job was never created", error: run.createError });
  else if (!final) violations.push({ kind: "the job was never read", id: run.created.id });
  else {
    if (final.status !== "done") violations.push({ kind: "the job did not end", status: final.status });
    if (final.matched !== expected) violations.push({ kind: "matched is not the family", matched: final.matched, expected });
    if (final.done + final.failed !== final.matched) violations.push({ kind: "done + failed ≠ matched", matched: final.matched, done: final.done, failed: final.failed });
    if (final.failed > 0) violations.push({ kind: "workflows refused the cancel", failed: final.failed, errors: final.errors.slice(0, 10) });
  }
  violations.push(...sampleViolations(run.samples));
  const counts = final ? `${final.status}: matched ${final.matched} of ${expected}, done ${final.done}, failed ${final.failed}` : "no job";
  return (violations.length ? fail : pass)(name, `${counts}; ${run.samples.length} readings`, { violations: violations.slice(0, 30), final });
}

/** Each reading counts no more than it matched, and no count goes back from one reading to the next. */
export function sampleViolations(samples: readonly JobSample[]): Violation[] {
  const read = samples.flatMap((s) => (s.job ? [{ at: s.at, ...s.job }] : []));
  const violations: Violation[] = [];
  read.forEach((s, i) => {
    if (s.done + s.failed > s.matched) violations.push({ kind: "a reading counted more than it matched", ...s });
    const before = read[i - 1];
    if (before && (s.matched < before.matched || s.done < before.done || s.failed < before.failed)) violations.push({ kind: "a count went back", before, after: s });
  });
  return violations;
}

/** Case 34 exercised: the job was created before the kill and ended after it. */
export function checkRestartDuringJob(run: BulkRun, outage: Outage | null, restartAsked: boolean): Check {
  const name = "bulk job: Shepherd's restart came while it ran (case 34)";
  if (!restartAsked) return pass(name, "no restart in this run (--no-restart): the job ran undisturbed");
  if (!outage) return fail(name, "the restart never came");
  const createdAt = run.created?.createdAt;
  const endedAt = run.final?.endedAt;
  const atKill = run.atKill?.job;
  const found = createdAt !== undefined && createdAt < outage.from && (endedAt === undefined || endedAt > outage.from);
  const detail = found
    ? `created ${((outage.from - createdAt) / 1000).toFixed(1)} s before the kill${atKill ? ` (${atKill.done} done of ${atKill.matched} matched just before it)` : ""}, done ${endedAt === undefined ? "never" : `${((endedAt - outage.to) / 1000).toFixed(1)} s after Shepherd was back`}`
    : `created ${createdAt === undefined ? "never" : `at ${createdAt}`}, ended ${endedAt ?? "never"}; the kill came at ${outage.from}`;
  return (found ? pass : fail)(name, detail, { createdAt, endedAt, outage, atKill });
}

/** Whether a probe overlapped the outage, or came within the grace after it. */
const duringOutage = (p: FrontDoorProbe, outage: Outage | null): boolean => outage !== null && p.at <= outage.to + AFTER_OUTAGE_GRACE_MS && p.at + p.ms >= outage.from;

/** Every question to the front door while the job ran was answered 200, but during the restart's outage. */
export function checkFrontDoor(probes: readonly FrontDoorProbe[], outage: Outage | null): Check {
  const name = "bulk job: the front door answered throughout";
  const outside = probes.filter((p) => !duringOutage(p, outage));
  const unanswered = outside.filter((p) => p.status !== 200);
  const ms = distribution(outside.filter((p) => p.status === 200).map((p) => p.ms));
  const detail = `${outside.length - unanswered.length}/${outside.length} answered (${probes.length - outside.length} during the restart apart); p50 ${ms.p50 ?? "–"} ms, p99 ${ms.p99 ?? "–"} ms, max ${ms.max ?? "–"} ms`;
  if (outside.length === 0) return fail(name, "no question was asked while the job ran");
  return (unanswered.length ? fail : pass)(name, detail, { unanswered: unanswered.slice(0, 20), latencyMs: ms });
}
