// What the supervision scenarios (lib/supervision.ts) left behind, read from each workflow's final view and
// history and from what the remotes saw. supervision-checks.ts judges these facts; the report shows them
// (`supervision` in latest.json, three rows in the table).
import { isDeepStrictEqual } from "node:util";
import type { AttemptView, EventData, HistoryEvent, StepView, TargetRow } from "./api-shapes.ts";
import { BATCH_RETRY } from "./breaker.ts";
import type { BreakerRun, FinalTarget, TargetsSeen } from "./breaker.ts";
import type { SoakWorkflow } from "./definitions.ts";
import type { Final } from "./finals.ts";
import { ofStep } from "./history.ts";
import { LOST_STEP } from "./lost-answers.ts";
import type { LostMode } from "./lost-answers.ts";
import type { HostOutage, KeyRecord, RemoteStats, VerifyCall } from "./remote-ledger.ts";
import { STALL_STEP } from "./stall.ts";
import type { SupervisionPlan, SupervisionRun } from "./supervision.ts";

/** A step_stalled event of a stalling workflow: its attempt and time, with the event's data. */
export type Stall = EventData & { attempt: number | undefined; at: number };

export interface StallCase {
  id: string;
  status: string | null;
  startError: unknown;
  stuckAttempt: number | null;
  firstAttempt: number | null;
  stuckTimeout: string | null;
  stuckHeartbeatsAccepted: number;
  stuckEndedBy: string | null;
  stall: Stall | null;
  otherStalls: Stall[];
  attempts: number;
  applied: number;
  outputIsEffect: boolean;
}

export interface StrayStall {
  id: string;
  stepId: string | undefined;
  attempt: number | undefined;
  via: "history" | "view";
}

export interface LostAnswerCase {
  id: string;
  status: string | null;
  startError: unknown;
  mode: LostMode | null;
  lostAttempt: number | null;
  actionRequests: number;
  applied: number;
  replays: number;
  verifies: number;
  verifiesFound: number;
  verifiesWithOtherKey: number;
  verifiedAttempts: (number | undefined)[];
  attempts: number;
  outputIsEffect: boolean;
}

/** A step of the breaker's batch: the attempts it used (parked ones given back) and its trail. */
export interface BatchStep {
  id: string;
  status: string;
  used: number;
  parked: number;
  trail: string;
}

export interface BatchCase {
  id: string;
  status: string | null;
  steps: BatchStep[];
}

/** A breaker event of the batch's host, with where it happened. */
interface BreakerEvent {
  id: string;
  stepId: string | undefined;
  attempt: number | undefined;
  at: number;
  data: EventData | undefined;
}

export interface Releases {
  count: number;
  failedProbes: number;
  firstAfterUpMs: number | null;
  lastAfterUpMs: number | null;
}

/** What the host that went down showed; `skipped` when the scenario did not run or no call reached the host. */
export type BreakerFacts =
  | { skipped: string }
  | {
      skipped?: undefined;
      host: string;
      mainHost: string;
      outage: HostOutage & { downAfterStartMs: number };
      targetsApi: string | null;
      maxAttempts: number;
      batch: BatchCase[];
      maxUsed: number;
      opened: { id: string; stepId: string | undefined; afterDownMs: number | null; failures: number | undefined; openForMs: number }[];
      sampledOpenAfterMs: number | null;
      parkings: number;
      stepsParked: number;
      maxParkedListed: number;
      releases: Releases;
      answeredDown: number;
      mainHostOpened: { id: string; stepId: string | undefined; at: number; failures: number | undefined }[];
      mainHostStates: string[];
      samples: number;
      final: FinalTarget | undefined;
    };

export interface SupervisionFacts {
  stalls: StallCase[];
  strayStalls: StrayStall[];
  lostAnswers: LostAnswerCase[];
  breaker: BreakerFacts;
}

/** What a family's case reads of one workflow: its final reading, the step's view, the remote's record. */
interface CaseContext {
  f: Final | undefined;
  events: HistoryEvent[];
  step: StepView | undefined;
  record: KeyRecord | undefined;
  startError: unknown;
}

interface FactSources {
  plan: SupervisionPlan;
  run: SupervisionRun;
  finals: readonly Final[];
  remoteStats: RemoteStats;
  secondHostStats: RemoteStats;
}

/** Everything the checks and the report need: {stalls, strayStalls, lostAnswers, breaker}. */
export function supervisionFacts({ plan, run, finals, remoteStats, secondHostStats }: FactSources): SupervisionFacts {
  const byId = new Map(finals.map((f) => [f.id, f]));
  const results = new Map(run.results.map((r) => [r.id, r]));
  const context = (wf: SoakWorkflow, stepId: string): CaseContext => {
    const f = byId.get(wf.id);
    const started = results.get(wf.id);
    return { f, events: f?.events ?? [], step: f?.view?.steps.find((s) => s.id === stepId), record: remoteStats.keys[`${wf.id}:${stepId}`], startError: started?.started ? null : (started?.startError ?? null) };
  };
  return {
    stalls: plan.stalls.map((wf) => stallCase(wf, context(wf, STALL_STEP))),
    strayStalls: strayStalls(finals, new Set(plan.stalls.map((wf) => wf.id))),
    lostAnswers: plan.lostAnswers.map((wf) => lostAnswerCase(wf, context(wf, LOST_STEP), remoteStats.verifies ?? {})),
    breaker: breakerCase(run.breaker, plan, byId, secondHostStats),
  };
}

/** A stalling workflow: the attempt the remote kept stuck, how it ended, and the stalls in its history. */
function stallCase(wf: SoakWorkflow, { f, events, step, record, startError }: CaseContext): StallCase {
  const stuck = record?.jobs.find((job) => job.stuck) ?? null;
  const stalls = ofStep(events, "step_stalled", STALL_STEP).map((e): Stall => ({ attempt: e.attempt, at: e.at, ...e.data }));
  return {
    id: wf.id,
    status: f?.view?.status ?? null,
    startError,
    stuckAttempt: stuck?.attempt ?? null,
    firstAttempt: step?.attempts[0]?.n ?? null,
    stuckTimeout: step?.attempts.find((a) => a.n === stuck?.attempt)?.error?.timeout ?? null,
    stuckHeartbeatsAccepted: stuck?.heartbeats.filter((h) => h.status === 200).length ?? 0,
    stuckEndedBy: stuck?.ended?.by ?? null,
    stall: stalls.find((s) => s.attempt === stuck?.attempt) ?? null,
    otherStalls: stalls.filter((s) => s.attempt !== stuck?.attempt),
    attempts: step?.attempts.length ?? 0,
    applied: record?.applied ?? 0,
    outputIsEffect: record?.appliedBody != null && isDeepStrictEqual(step?.output, record.appliedBody),
  };
}

/** Stalls in workflows not meant to stall: a step_stalled event, or an attempt whose error says `stalled`. */
function strayStalls(finals: readonly Final[], stallIds: ReadonlySet<string>): StrayStall[] {
  const stray: StrayStall[] = [];
  for (const f of finals) {
    if (stallIds.has(f.id)) continue;
    for (const e of f.events) if (e.type === "step_stalled") stray.push({ id: f.id, stepId: e.stepId, attempt: e.attempt, via: "history" });
    for (const step of f.view?.steps ?? []) {
      for (const a of step.attempts ?? []) if (a.error?.timeout === "stalled") stray.push({ id: f.id, stepId: step.id, attempt: a.n, via: "view" });
    }
  }
  return stray;
}

/** A lost-answer workflow: how the remote lost its answer, what it was asked since, and what the engine recorded. */
function lostAnswerCase(wf: SoakWorkflow, { f, events, step, record, startError }: CaseContext, verifies: Record<string, VerifyCall[]>): LostAnswerCase {
  const key = `${wf.id}:${LOST_STEP}`;
  const calls = verifies[key] ?? [];
  return {
    id: wf.id,
    status: f?.view?.status ?? null,
    startError,
    mode: record?.lost?.mode ?? null,
    lostAttempt: record?.lost?.attempt ?? null,
    actionRequests: record?.requests ?? 0,
    applied: record?.applied ?? 0,
    replays: record?.replays ?? 0,
    verifies: calls.length,
    verifiesFound: calls.filter((c) => c.found).length,
    verifiesWithOtherKey: calls.filter((c) => c.keyHeader !== key).length,
    verifiedAttempts: ofStep(events, "step_verified", LOST_STEP).map((e) => e.attempt),
    attempts: step?.attempts.length ?? 0,
    outputIsEffect: record?.appliedBody != null && isDeepStrictEqual(step?.output, record.appliedBody),
  };
}

/**
 * The host that went down: its breaker's events in every history, the steps of the batch with the attempts they
 * used (parked attempts are given back), the listing's samples, and the main remote's breaker beside it.
 */
function breakerCase(run: BreakerRun | undefined, plan: SupervisionPlan, byId: Map<string, Final>, secondHostStats: RemoteStats): BreakerFacts {
  if (!run || run.skipped !== undefined) return { skipped: run?.skipped ?? "not run" };
  const { host, mainHost, outage, targets } = run;
  const { from, to } = outage;
  if (from === null || to === null) return { skipped: `no call of the batch reached ${run.host}` };
  const finals = [...byId.values()];
  const events = (type: string, h: string): BreakerEvent[] =>
    finals.flatMap((f) => f.events.filter((e) => e.type === type && e.data?.host === h).map((e) => ({ id: f.id, stepId: e.stepId, attempt: e.attempt, at: e.at, data: e.data })));
  const opened = events("circuit_opened", host).sort((x, y) => x.at - y.at);
  const parkings = events("step_parked", host);
  const batch = plan.batch.map((wf) => batchCase(wf, byId.get(wf.id)));
  const hostReadings = readingsOf(targets, host);
  const since = (at: number | undefined): number | null => (at === undefined ? null : at - from);
  return {
    host,
    mainHost,
    outage: { ...outage, downAfterStartMs: from - outage.armedAt },
    targetsApi: targets.available === false ? `GET /v1/targets answered ${targets.missingStatus}` : null,
    maxAttempts: BATCH_RETRY.maxAttempts,
    batch,
    maxUsed: Math.max(0, ...batch.flatMap((b) => b.steps.map((s) => s.used))),
    opened: opened.map((e) => ({ id: e.id, stepId: e.stepId, afterDownMs: since(e.at), failures: e.data?.failures, openForMs: (e.data?.openUntil ?? NaN) - e.at })),
    sampledOpenAfterMs: since(hostReadings.find((r) => r.state !== "closed")?.at),
    parkings: parkings.length,
    stepsParked: new Set(parkings.map((p) => `${p.id}|${p.stepId}`)).size,
    maxParkedListed: Math.max(0, ...hostReadings.map((r) => r.parked ?? 0)),
    // circuit_closed is a parked step's release: probes during the outage, then everyone after the last opening.
    releases: releasesAround(events("circuit_closed", host), opened, to),
    answeredDown: Object.values(secondHostStats.keys).reduce((n, k) => n + (k.faults.outage503 ?? 0), 0),
    mainHostOpened: events("circuit_opened", mainHost).map((e) => ({ id: e.id, stepId: e.stepId, at: e.at, failures: e.data?.failures })),
    mainHostStates: [...new Set(readingsOf(targets, mainHost).map((r) => r.state))],
    samples: targets.samples.length,
    final: targets.final,
  };
}

/** The listing's rows of one host, sample by sample, each with its time. */
const readingsOf = (targets: TargetsSeen, host: string): (TargetRow & { at: number })[] =>
  targets.samples.flatMap((s) => {
    const row = s.rows[host];
    return row ? [{ at: s.at, ...row }] : [];
  });

/** A workflow of the batch: per step, the attempts it used (parked ones are given back) and its trail of attempts. */
function batchCase(wf: SoakWorkflow, f: Final | undefined): BatchCase {
  const steps = (f?.view?.steps ?? []).map((s) => {
    const parked = new Set(ofStep(f?.events ?? [], "step_parked", s.id).map((e) => e.attempt));
    const actions = s.attempts.filter((a) => (a.kind ?? "action") === "action");
    // Each attempt as "n:status(why)", so a step that used many can be read without its history.
    const label = (a: AttemptView): string => (parked.has(a.n) ? `${a.n}:parked` : `${a.n}:${a.status}${a.error ? `(${a.error.timeout ?? a.error.status ?? a.error.message?.slice(0, 40)})` : ""}`);
    return { id: s.id, status: s.status, used: actions.filter((a) => !parked.has(a.n)).length, parked: parked.size, trail: actions.map(label).join(" ") };
  });
  return { id: wf.id, status: f?.view?.status ?? null, steps };
}

/** Releases before the last opening were probes that failed; the rest came with the close (times after the host was back). */
function releasesAround(closed: readonly BreakerEvent[], opened: readonly BreakerEvent[], upAt: number): Releases {
  const lastOpenedAt = Math.max(-Infinity, ...opened.map((e) => e.at));
  const after = closed.filter((e) => e.at > lastOpenedAt).map((e) => e.at - upAt);
  return {
    count: closed.length,
    failedProbes: closed.length - after.length,
    firstAfterUpMs: after.length ? Math.min(...after) : null,
    lastAfterUpMs: after.length ? Math.max(...after) : null,
  };
}
