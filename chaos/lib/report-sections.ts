// The report's sections beyond the checks and measurements: the workflow language's workflows, the cron
// schedule, the burst, and the supervision scenarios, each as latest.json keeps it (report.ts prints them).
import { field } from "./api-shapes.ts";
import type { BurstSummary } from "./burst.ts";
import type { SoakWorkflow } from "./definitions.ts";
import type { Final } from "./finals.ts";
import { measure } from "./metrics.ts";
import type { Distribution } from "./metrics.ts";
import { SLEEP_STEP, WAIT_STEP } from "./language.ts";
import type { EventSend, LanguageRecord, SleepPlan } from "./language.ts";
import type { Outage } from "./restart.ts";
import type { ScheduleResult } from "./schedule-end.ts";
import type { Reading } from "./schedule-readings.ts";
import { tally } from "./checks/check.ts";

/** One language workflow in the report: its plan, when it slept and waited, what was sent and answered. */
export interface LanguageEntry {
  id: string;
  status: string | null;
  sleep: SleepPlan;
  plannedWakeAt: number | null;
  sleepingAt: number | null;
  wokeAt: number | null;
  waitingAt: number | null;
  consumedAt: number | null;
  event: LanguageRecord["event"];
  waitingSeenAt: number | null;
  sends: EventSend[];
}

export interface LanguageReport {
  workflows: number;
  sleeps: { duration: number; until: number };
  events: { early: number; late: number; twice: number };
  /** Answers by "phase status". */
  sendAnswers: Record<string, number>;
  /** What slept, waited or sat in the inbox across the restart. */
  acrossRestart: { sleeps: number; waits: number; bufferedEvents: number };
  list: LanguageEntry[];
}

/** A fire in the report, with its workflow's ending. */
export interface FireEntry {
  at: number;
  iso: string;
  outcome: string | null;
  workflowId: string | null;
  error: string | undefined;
  readings: number;
  object: number | null;
  status: string | null;
  startLagMs: number | null;
  inOutage: boolean;
}

export interface ScheduleReport extends Pick<ScheduleResult, "id" | "cron" | "overlap" | "catchupWindowMs" | "missingApi" | "createdAt" | "readings"> {
  create: { tries: number; statuses: Record<string, number>; error: unknown };
  lastReading: Reading | null;
  delete: ScheduleResult["delete"] | null;
  afterDelete: number | null;
  followedUntil: number | null;
  listed: { count: number; error: string | undefined } | null;
  fires: FireEntry[];
}

export interface BurstReport extends BurstSummary {
  outcomes: Record<string, number>;
  declinedByDesign: number;
  actionAttemptsPerStep: Distribution;
  actionAttemptsHistogram: Record<string, number>;
  workflowDurationMs: Distribution;
  timeouts: Record<string, Distribution>;
}

/** The language workflows: their plans, what was sent and answered, how each sleep and wait went. */
export function languageReport(workflows: readonly SoakWorkflow[], finals: readonly Final[], outage: Outage | null): LanguageReport {
  const byId = new Map(finals.map((f) => [f.id, f]));
  const list = workflows.flatMap((wf) => (wf.language ? [languageEntry(wf.id, wf.language.sleep, wf.language.event, byId.get(wf.id))] : []));
  // What the restart could have lost: sleeps and waits in progress at the kill, early events still in the inbox
  // (begun before the kill, ended after it: only a running Shepherd writes the end, so after it was back).
  const across = (from: number | null, to: number | null): boolean => outage !== null && from !== null && from < outage.from && (to ?? Infinity) > outage.from;
  const acrossRestart = {
    sleeps: list.filter((l) => across(l.sleepingAt, l.wokeAt)).length,
    waits: list.filter((l) => across(l.waitingAt, l.consumedAt)).length,
    bufferedEvents: list.filter((l) => across(l.sends.find((s) => s.phase === "first" && field(s.body, "consumed") === false)?.at ?? null, l.consumedAt)).length,
  };
  const sendAnswers = tally(list.flatMap((l) => l.sends.map((s) => `${s.phase} ${s.status}`)));
  return {
    workflows: list.length,
    sleeps: { duration: list.filter((l) => l.sleep.mode === "duration").length, until: list.filter((l) => l.sleep.mode === "until").length },
    events: { early: list.filter((l) => l.event.timing === "early").length, late: list.filter((l) => l.event.timing === "late").length, twice: list.filter((l) => l.event.duplicate).length },
    sendAnswers,
    acrossRestart,
    list,
  };
}

/** One language workflow: when its history says it slept, woke, waited and consumed, beside what the driver sent. */
function languageEntry(id: string, sleep: SleepPlan, event: LanguageRecord["event"], f: Final | undefined): LanguageEntry {
  const find = (type: string, stepId: string) => f?.events.find((e) => e.type === type && e.stepId === stepId);
  const at = (type: string, stepId: string): number | null => find(type, stepId)?.at ?? null;
  return {
    id,
    status: f?.view?.status ?? null,
    sleep,
    // until: the time the harness put in the input; durationMs: the one step_sleeping names.
    plannedWakeAt: f?.language?.plannedWakeAt ?? find("step_sleeping", SLEEP_STEP)?.data?.until ?? null,
    sleepingAt: at("step_sleeping", SLEEP_STEP),
    wokeAt: at("step_succeeded", SLEEP_STEP),
    waitingAt: at("step_waiting_for_event", WAIT_STEP),
    consumedAt: at("event_consumed", WAIT_STEP),
    event: { name: event.name, id: event.id, timing: event.timing, duplicate: event.duplicate },
    waitingSeenAt: f?.language?.waitingSeenAt ?? null,
    sends: (f?.language?.sends ?? []).map((s) => ({ phase: s.phase, at: s.at, status: s.status, body: s.body, ...(s.error ? { error: s.error } : {}) })),
  };
}

/** The schedule for the report: its spec, every reading, every fire with its workflow's ending, the delete. */
export function scheduleReport(run: ScheduleResult, finals: readonly Final[], outage: Outage | null): ScheduleReport {
  const byId = new Map(finals.map((f) => [f.id, f]));
  const objects = new Map(run.objects.map((o) => [o.at, o]));
  const fireTimes = [...new Set([...run.fires.map((f) => f.at), ...run.objects.filter((o) => o.status === 200).map((o) => o.at)])].sort((a, b) => a - b);
  return {
    id: run.id,
    cron: run.cron,
    overlap: run.overlap,
    catchupWindowMs: run.catchupWindowMs,
    missingApi: run.missingApi,
    create: { tries: run.create.tries, statuses: run.create.statuses, error: run.create.error },
    createdAt: run.createdAt,
    lastReading: run.lastView ?? null,
    delete: run.delete ?? null,
    afterDelete: run.afterDelete ?? null,
    followedUntil: run.followedUntil ?? null,
    readings: run.readings,
    listed: run.listed ? { count: run.listed.rows.length, error: run.listed.error } : null,
    fires: fireTimes.map((at) => fireEntry(at, run.fires.find((f) => f.at === at), objects.get(at)?.status ?? null, byId.get(`${run.id}:${at}`)?.view ?? null, outage)),
  };
}

function fireEntry(at: number, fire: ScheduleResult["fires"][number] | undefined, object: number | null, view: Final["view"], outage: Outage | null): FireEntry {
  return {
    at,
    iso: new Date(at).toISOString(),
    outcome: fire?.outcome ?? null,
    workflowId: fire?.workflowId ?? null,
    error: fire?.error,
    readings: fire?.seenIn.length ?? 0,
    object,
    status: view?.status ?? null,
    startLagMs: view ? view.createdAt - at : null,
    // Due before Shepherd was back and started after the kill: the restart caught it.
    inOutage: outage !== null && at <= outage.to && (view ? view.createdAt > outage.from : at >= outage.from),
  };
}

export function sumCounts(tables: readonly Record<string, number>[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const table of tables) for (const [key, n] of Object.entries(table)) sum[key] = (sum[key] ?? 0) + n;
  return sum;
}

/** How many ended in each status ("unreadable", "not started" for those without a view). */
export const outcomesOf = (finals: readonly Final[]): Record<string, number> => tally(finals.map((f) => f.view?.status ?? (f.started ? "unreadable" : "not started")));

/** The burst's figures for the table: what the front door did with it, how it ended, what it cost per step. */
export function burstReport(summary: BurstSummary, burstFinals: readonly Final[], burstWorkflows: readonly SoakWorkflow[], outage: Outage | null): BurstReport {
  const outcomes = outcomesOf(burstFinals);
  const m = measure(burstFinals, outage);
  return {
    ...summary,
    outcomes,
    declinedByDesign: burstWorkflows.filter((wf) => wf.declinedStep).length,
    actionAttemptsPerStep: m.actionAttemptsPerStep,
    actionAttemptsHistogram: m.actionAttemptsHistogram,
    workflowDurationMs: m.workflowDurationMs,
    timeouts: m.detectionLatencyByTimeoutMs,
  };
}
