// Measurements taken from each workflow's history and final view: how fast the supervisor noticed a silent
// or overrunning attempt, how long a faulted step took to recover, how many attempts steps needed.
import { summarize } from "../../scripts/lib/stats.ts";
import type { HistoryEvent, WorkflowView } from "./api-shapes.ts";
import type { Outage } from "./restart.ts";

const FAILURE_TYPES: ReadonlySet<string> = new Set(["step_failed", "step_timed_out", "step_heartbeat_missed", "step_stalled"]);
const DETECTION_TYPES: ReadonlySet<string> = new Set(["step_heartbeat_missed", "step_timed_out", "step_stalled"]);
/** How long before the kill a deadline still counts as hit by the restart (the supervisor's 1 s promise). */
const OUTAGE_LEAD_MS = 1_000;

/** A sample in brief (scripts/lib/stats.ts); the figures are null when it had no finite number. */
export interface Distribution {
  n: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
  mean: number | null;
}

export const distribution = (values: readonly number[]): Distribution => summarize(values);

/** A detection of a missed deadline: how late the supervisor was, and whether the restart explains it. */
export interface Detection {
  id: string;
  stepId: string | undefined;
  attempt: number | undefined;
  type: string;
  overdueMs: number;
  deadlineAt: number | undefined;
  inOutage: boolean;
}

/** What measure() reads of a workflow: its final view and whole history. */
export interface Measured {
  id: string;
  view: WorkflowView | null;
  events: HistoryEvent[];
}

export type Measurements = ReturnType<typeof summarizeTally>;

/** Everything gathered over the workflows, before it is summarized. */
interface Tally {
  detection: number[];
  detectionOutsideOutage: number[];
  detectionByKind: Record<string, number[]>;
  recovery: number[];
  retryLateness: number[];
  actionAttempts: number[];
  actionAttemptsHistogram: Record<string, number>;
  compensationAttempts: number[];
  eventCounts: Record<string, number>;
  staleReports: number;
  staleByReport: Record<string, number>;
  slowest: Detection[];
  durations: number[];
  longest: { id: string; durationMs: number; events: HistoryEvent[] }[];
}

/** One workflow's attempts as its history goes: their kind and start, the first failure per step, the retries due. */
interface AttemptTrail {
  kind: Map<string, string>;
  start: Map<string, number>;
  firstFailure: Map<string | undefined, number>;
  retryDueAt: Map<string | undefined, { at: number; kind: string | undefined }>;
}

/**
 * `outage`: {from, to} of the restart (epoch ms) or null; detections whose deadline fell inside it are
 * reported apart, since nothing can act while the process is down.
 */
export function measure(finals: readonly Measured[], outage: Outage | null): Measurements {
  const tally: Tally = {
    detection: [], detectionOutsideOutage: [], detectionByKind: {}, recovery: [], retryLateness: [], actionAttempts: [], actionAttemptsHistogram: {},
    compensationAttempts: [], eventCounts: {}, staleReports: 0, staleByReport: {}, slowest: [], durations: [], longest: [],
  };
  for (const { id, view, events } of finals) {
    const trail: AttemptTrail = { kind: new Map(), start: new Map(), firstFailure: new Map(), retryDueAt: new Map() };
    for (const event of events) readEvent(tally, trail, id, event, outage);
    if (view?.endedAt) {
      tally.durations.push(view.endedAt - view.createdAt);
      tally.longest.push({ id, durationMs: view.endedAt - view.createdAt, events });
    }
    countAttempts(tally, view);
  }
  return summarizeTally(tally);
}

function readEvent(tally: Tally, trail: AttemptTrail, id: string, event: HistoryEvent, outage: Outage | null): void {
  tally.eventCounts[event.type] = (tally.eventCounts[event.type] ?? 0) + 1;
  const attemptKey = `${event.stepId}#${event.attempt}`;
  if (event.type === "stale_report_rejected") {
    tally.staleReports += 1;
    const report = event.data?.report ?? "?";
    tally.staleByReport[report] = (tally.staleByReport[report] ?? 0) + 1;
  }
  if (event.type === "step_scheduled") {
    trail.kind.set(attemptKey, event.data?.kind ?? "action");
    trail.start.set(attemptKey, event.at);
  }
  if (event.type === "step_started") trail.start.set(attemptKey, event.at);
  readRetry(tally, trail, event);
  if (DETECTION_TYPES.has(event.type) && typeof event.data?.overdueMs === "number") readDetection(tally, id, event, event.data.overdueMs, outage);
  // Recovery is measured for actions only: from the start of the step's first failed attempt.
  if (FAILURE_TYPES.has(event.type) && trail.kind.get(attemptKey) !== "compensation" && !trail.firstFailure.has(event.stepId)) {
    trail.firstFailure.set(event.stepId, trail.start.get(attemptKey) ?? event.at);
  }
  const failedAt = trail.firstFailure.get(event.stepId);
  if (event.type === "step_succeeded" && failedAt !== undefined) {
    tally.recovery.push(event.at - failedAt);
    trail.firstFailure.delete(event.stepId);
  }
}

/** A retry's backoff is a deadline too: the alarm should start the next attempt when it is due. */
function readRetry(tally: Tally, trail: AttemptTrail, event: HistoryEvent): void {
  if (event.type === "step_retry_scheduled" && typeof event.data?.nextRetryAt === "number") {
    trail.retryDueAt.set(event.stepId, { at: event.data.nextRetryAt, kind: event.data.kind });
  }
  if (event.type === "compensation_started") trail.retryDueAt.clear(); // pending action retries are cancelled
  const due = trail.retryDueAt.get(event.stepId);
  if (event.type === "step_scheduled" && due) {
    if (due.kind === event.data?.kind) tally.retryLateness.push(Math.max(0, event.at - due.at));
    trail.retryDueAt.delete(event.stepId);
  }
}

function readDetection(tally: Tally, id: string, event: HistoryEvent, overdue: number, outage: Outage | null): void {
  tally.detection.push(overdue);
  // step_stalled carries no `timeout`: its kind is the view's, "stalled".
  const kind = event.data?.timeout ?? (event.type === "step_stalled" ? "stalled" : event.type);
  (tally.detectionByKind[kind] ??= []).push(overdue);
  const deadlineAt = event.data?.deadlineAt;
  // A deadline just before the kill is hit too: its alarm may not have run yet when the process died.
  const inOutage = outage !== null && typeof deadlineAt === "number" && deadlineAt >= outage.from - OUTAGE_LEAD_MS && deadlineAt <= outage.to;
  if (!inOutage) tally.detectionOutsideOutage.push(overdue);
  tally.slowest.push({ id, stepId: event.stepId, attempt: event.attempt, type: event.type, overdueMs: overdue, deadlineAt, inOutage });
}

function countAttempts(tally: Tally, view: WorkflowView | null): void {
  for (const step of view?.steps ?? []) {
    const actions = step.attempts.filter((a) => (a.kind ?? "action") === "action").length;
    const compensations = step.attempts.filter((a) => a.kind === "compensation").length;
    if (actions > 0) {
      tally.actionAttempts.push(actions);
      tally.actionAttemptsHistogram[actions] = (tally.actionAttemptsHistogram[actions] ?? 0) + 1;
    }
    if (compensations > 0) tally.compensationAttempts.push(compensations);
  }
}

function summarizeTally(t: Tally) {
  return {
    detectionLatencyMs: distribution(t.detection),
    detectionLatencyOutsideRestartMs: distribution(t.detectionOutsideOutage),
    detectionLatencyByTimeoutMs: Object.fromEntries(Object.entries(t.detectionByKind).map(([kind, values]): [string, Distribution] => [kind, distribution(values)])),
    // The slowest detections the restart does not explain come first: those are the ones to look into.
    slowestDetections: [...t.slowest.filter((d) => !d.inOutage), ...t.slowest.filter((d) => d.inOutage)]
      .sort((a, b) => Number(a.inOutage) - Number(b.inOutage) || b.overdueMs - a.overdueMs)
      .slice(0, 8),
    recoveryMs: distribution(t.recovery),
    retryStartLatenessMs: distribution(t.retryLateness),
    workflowDurationMs: distribution(t.durations),
    // The slowest workflows' histories, one line per event, to see where the time went.
    slowestWorkflows: t.longest
      .sort((a, b) => b.durationMs - a.durationMs)
      .slice(0, 3)
      .map(({ id, durationMs, events }) => ({ id, durationMs, timeline: events.map((e) => timelineLine(e, events[0]?.at ?? e.at)) })),
    actionAttemptsPerStep: distribution(t.actionAttempts),
    // Steps by how many action attempts they took: {"1": 850, "2": 40, …}.
    actionAttemptsHistogram: t.actionAttemptsHistogram,
    compensationAttemptsPerStep: distribution(t.compensationAttempts),
    staleReportRejected: t.staleReports,
    staleReportRejectedByReport: t.staleByReport,
    historyEventCounts: t.eventCounts,
  };
}

function timelineLine(event: HistoryEvent, origin: number): string {
  const subject = event.stepId ? ` ${event.stepId}#${event.attempt}` : "";
  const data = event.data ? ` ${JSON.stringify(event.data).slice(0, 160)}` : "";
  return `+${event.at - origin} ${event.type}${subject}${data}`;
}
