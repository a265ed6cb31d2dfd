// The checks of the supervision scenarios (lib/supervision.ts), judged on lib/supervision-facts.ts's facts.
import { OVERDUE_LIMIT_MS } from "../alarms.ts";
import { distribution } from "../metrics.ts";
import type { Outage } from "../restart.ts";
import { STALL_PROGRESS_MS } from "../stall.ts";
import type { BreakerFacts, LostAnswerCase, StallCase, SupervisionFacts } from "../supervision-facts.ts";
import { fail, pass, skipped, tally } from "./check.ts";
import type { Check, Report, Violation } from "./check.ts";

/** How late a stall may be detected: the supervisor's deadlines get the alarm check's 5 s. */
export const STALL_LATE_LIMIT_MS = OVERDUE_LIMIT_MS;
/** A deadline this long before the kill counts as hit by the restart too (its alarm may not have run yet). */
const OUTAGE_LEAD_MS = 1_000;

const inOutage = (outage: Outage | null, at: unknown): outage is Outage => outage !== null && typeof at === "number" && at >= outage.from - OUTAGE_LEAD_MS && at <= outage.to;

/** Every case of a family refused at its start with a 400: this build does not know the feature. */
function refusedByBuild(cases: readonly { startError: unknown; status: string | null }[]): string | null {
  return cases.length > 0 && cases.every((c) => c.startError && c.status === null) ? JSON.stringify(cases[0]?.startError).slice(0, 200) : null;
}

/**
 * The stalling agent: each stalling workflow completed; the attempt the remote kept stuck (heartbeats on, same
 * progress) ended `stalled` in the view, with a step_stalled whose deadline is progressAt + progressMs and which
 * came ≤ 5 s after it (after the restart's end for a deadline in its outage); the attempt that completed is the
 * step's output; no other attempt stalled unless the restart silenced its heartbeats; and no workflow not meant
 * to stall has a stall anywhere.
 */
export function checkStalls(facts: SupervisionFacts, outage: Outage | null): Check {
  const name = `stalls detected ≤ ${STALL_LATE_LIMIT_MS / 1000} s, only where meant`;
  const cases = facts.stalls;
  if (cases.length === 0) return fail(name, "no stalling workflow ran");
  const refused = refusedByBuild(cases);
  if (refused) return skipped(name, `skipped (this build refuses timeouts.progressMs: ${refused})`);
  const violations: Violation[] = facts.strayStalls.map((s) => ({ kind: "a stall where none was meant", ...s }));
  const overdue: number[] = [];
  for (const c of cases) {
    const found = judgeStall(c, outage);
    violations.push(...found.violations.map((x) => ({ id: c.id, ...x })));
    if (found.overdueMs !== null) overdue.push(found.overdueMs);
  }
  const o = distribution(overdue);
  const stalled = cases.filter((c) => c.stuckTimeout === "stalled").length;
  const atFirst = cases.filter((c) => c.stuckAttempt !== null && c.stuckAttempt === c.firstAttempt).length;
  const detail =
    `${cases.filter((c) => c.status === "completed").length}/${cases.length} stalling workflows completed; ${stalled} stuck attempts ended stalled (${atFirst} of them attempts[0]), ` +
    `detected overdue p50 ${o.p50 ?? "–"} ms, max ${o.max ?? "–"} ms; ${facts.strayStalls.length} stall(s) elsewhere; ${violations.length} violation(s)`;
  return (violations.length ? fail : pass)(name, detail, { violations: violations.slice(0, 30), overdueMs: o });
}

/** One stalling workflow: {violations, overdueMs} (overdueMs null without a step_stalled for the stuck attempt). */
function judgeStall(c: StallCase, outage: Outage | null): { violations: Violation[]; overdueMs: number | null } {
  const violations: Violation[] = [];
  const v: Report = (kind, extra = {}) => violations.push({ kind, ...extra });
  if (c.status !== "completed") v("did not complete", { status: c.status, startError: c.startError });
  if (c.stuckAttempt === null) {
    v("no attempt reached the remote's stalling job");
    return { violations, overdueMs: null };
  }
  if (c.stuckTimeout !== "stalled") v("the stuck attempt did not end stalled", { attempt: c.stuckAttempt, timeout: c.stuckTimeout });
  for (const s of c.otherStalls) if (!inOutage(outage, s.deadlineAt)) v("an attempt whose progress moved stalled", { stall: s });
  if (c.status === "completed" && !c.outputIsEffect) v("the output is not the effect the remote completed with");
  const s = c.stall;
  if (!s) {
    v("no step_stalled for the stuck attempt", { attempt: c.stuckAttempt, endedBy: c.stuckEndedBy });
    return { violations, overdueMs: null };
  }
  const explained = inOutage(outage, s.deadlineAt);
  if (c.stuckHeartbeatsAccepted === 0 && !explained) v("no heartbeat of the stuck attempt was accepted", { endedBy: c.stuckEndedBy });
  if (s.progressMs !== STALL_PROGRESS_MS) v("step_stalled names another progressMs", { stall: s });
  if (s.deadlineAt !== (s.progressAt ?? NaN) + (s.progressMs ?? NaN)) v("step_stalled's deadlineAt is not progressAt + progressMs", { stall: s });
  // A deadline in the restart's outage could only be acted on once Shepherd was back.
  const lateMs = explained ? s.at - Math.max(s.deadlineAt ?? NaN, outage.to) : s.overdueMs;
  if (lateMs !== undefined && lateMs > STALL_LATE_LIMIT_MS) v("stall detected late", { lateMs, overdueMs: s.overdueMs, inOutage: explained });
  return { violations, overdueMs: s.overdueMs ?? null };
}

/**
 * Lost answers: each lost-answer workflow completed; the remote applied its effect once and got its action
 * exactly once (a second request would have been a replay); a `verify` call, carrying the step's
 * Idempotency-Key, found the effect; the history has one step_verified; the step's output is the effect.
 */
export function checkLostAnswers(facts: SupervisionFacts): Check {
  const name = "lost answers verified, action sent once";
  const cases = facts.lostAnswers;
  if (cases.length === 0) return fail(name, "no lost-answer workflow ran");
  const refused = refusedByBuild(cases);
  if (refused) return skipped(name, `skipped (this build refuses a step's verify: ${refused})`);
  const violations: Violation[] = [];
  const v = (kind: string, c: LostAnswerCase, extra: Record<string, unknown> = {}): number => violations.push({ kind, id: c.id, ...extra });
  for (const c of cases) {
    if (c.status !== "completed") v("did not complete", c, { status: c.status, startError: c.startError });
    if (c.mode === null) v("the remote never lost an answer (no request reached it)", c, { actionRequests: c.actionRequests });
    if (c.actionRequests !== 1) v("the action was not sent exactly once", c, { actionRequests: c.actionRequests, replays: c.replays });
    if (c.applied !== 1) v("the effect was not applied exactly once", c, { applied: c.applied });
    if (c.verifiesWithOtherKey > 0) v("verify sent without the step's Idempotency-Key", c, { verifies: c.verifies });
    if (c.mode !== null && c.verifiesFound === 0) v("no verify found the effect", c, { verifies: c.verifies });
    if (c.verifiedAttempts.length !== 1) v("step_verified is not in the history exactly once", c, { verifiedAttempts: c.verifiedAttempts });
    if (c.status === "completed" && !c.outputIsEffect) v("the output is not the effect verify found", c);
  }
  const modes = tally(cases.map((c) => c.mode ?? "none"));
  const detail =
    `${cases.filter((c) => c.status === "completed").length}/${cases.length} completed (${Object.entries(modes).map(([m, n]) => `${m} ${n}`).join(", ")}); ` +
    `${cases.filter((c) => c.verifiedAttempts.length === 1).length} verified, action requests ${cases.reduce((n, c) => n + c.actionRequests, 0)} for ${cases.length} steps, ` +
    `${cases.reduce((n, c) => n + c.applied, 0)} effects; ${violations.length} violation(s)`;
  return (violations.length ? fail : pass)(name, detail, { violations: violations.slice(0, 30) });
}

/**
 * The host that went down: its breaker opened (circuit_opened in a history, or the listing read open); steps
 * were parked; every workflow of the batch completed, no step failed or used more attempts than it has; the
 * breaker reads closed at the end; and the main remote's breaker, which needs 50 failures in a row, never opened.
 */
export function checkBreaker(b: BreakerFacts): Check {
  const name = "a host down opens its breaker, no attempt burned";
  if (b.skipped !== undefined) return fail(name, `not run: ${b.skipped}`);
  if (b.targetsApi && b.opened.length === 0) return skipped(name, `skipped (no circuit breaker in this build: ${b.targetsApi})`);
  const violations: Violation[] = [];
  const v: Report = (kind, extra = {}) => violations.push({ kind, ...extra });
  if (b.opened.length === 0 && b.sampledOpenAfterMs === null) v("the breaker never opened (no circuit_opened, never listed open)", { host: b.host });
  if (b.parkings === 0) v("no step was parked", { host: b.host });
  for (const wf of b.batch) {
    if (wf.status !== "completed") v("a workflow of the batch did not complete", { id: wf.id, status: wf.status });
    for (const s of wf.steps) {
      if (s.status === "failed") v("a step failed", { id: wf.id, stepId: s.id });
      if (s.used > b.maxAttempts) v("a step used more attempts than it has", { id: wf.id, stepId: s.id, used: s.used, maxAttempts: b.maxAttempts });
    }
  }
  if (b.final?.target?.state !== "closed") v("the breaker is not closed at the end", { host: b.host, final: b.final });
  if (b.mainHostOpened.length || b.mainHostStates.some((s) => s !== "closed")) v("the main remote's breaker opened", { opened: b.mainHostOpened.slice(0, 5), states: b.mainHostStates });
  const seconds = (ms: number | null | undefined): string => (ms === null || ms === undefined ? "–" : `${(ms / 1000).toFixed(1)} s`);
  // A release can come before the host is back: the probe's attempt waited in the queue past the outage.
  const aroundRecovery = (ms: number | null): string => (ms === null ? "never" : `${seconds(Math.abs(ms))} ${ms >= 0 ? "after" : "before"} it was back`);
  const firstOpen = b.opened[0] ? b.opened[0].afterDownMs : b.sampledOpenAfterMs;
  const detail =
    `${b.host} down ${seconds(b.outage.ms)}: opened after ${seconds(firstOpen)} (${b.opened.length}×), ${b.parkings} parkings of ${b.stepsParked} steps; ` +
    `${b.batch.filter((wf) => wf.status === "completed").length}/${b.batch.length} completed, attempts per step max ${b.maxUsed}/${b.maxAttempts}; ` +
    `released ${aroundRecovery(b.releases.firstAfterUpMs)}, ${b.final?.target?.state ?? "not listed"} at the end; main remote's breaker ${b.mainHostOpened.length ? "opened" : "never opened"}; ${violations.length} violation(s)`;
  return (violations.length ? fail : pass)(name, detail, { violations: violations.slice(0, 30) });
}
