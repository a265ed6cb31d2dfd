// Measurements taken from each workflow's history and final view: how fast the supervisor noticed a silent
// or overrunning attempt, how long a faulted step took to recover, how many attempts steps needed.
import { summarize } from "../../scripts/lib/stats.ts";

const FAILURE_TYPES = new Set(["step_failed", "step_timed_out", "step_heartbeat_missed", "step_stalled"]);
const DETECTION_TYPES = new Set(["step_heartbeat_missed", "step_timed_out", "step_stalled"]);
/** How long before the kill a deadline still counts as hit by the restart (the supervisor's 1 s promise). */
const OUTAGE_LEAD_MS = 1_000;

/**
 * `finals`: [{id, view, events}]. `outage`: {from, to} of the restart (epoch ms) or null; detections whose
 * deadline fell inside it are reported apart, since nothing can act while the process is down.
 */
export function measure(finals, outage) {
  const detection = [];
  const detectionOutsideOutage = [];
  const detectionByKind = {};
  const recovery = [];
  const retryLateness = [];
  const actionAttempts = [];
  const actionAttemptsHistogram = {};
  const compensationAttempts = [];
  const eventCounts = {};
  let staleReports = 0;
  const staleByReport = {};
  const slowest = [];
  const durations = [];
  const longest = [];

  for (const { id, view, events } of finals) {
    const attemptKind = new Map();
    const attemptStart = new Map();
    const firstFailure = new Map();
    const retryDueAt = new Map();
    for (const event of events) {
      eventCounts[event.type] = (eventCounts[event.type] ?? 0) + 1;
      const attemptKey = `${event.stepId}#${event.attempt}`;
      if (event.type === "stale_report_rejected") {
        staleReports += 1;
        const report = event.data?.report ?? "?";
        staleByReport[report] = (staleByReport[report] ?? 0) + 1;
      }
      if (event.type === "step_scheduled") {
        attemptKind.set(attemptKey, event.data?.kind ?? "action");
        attemptStart.set(attemptKey, event.at);
      }
      if (event.type === "step_started") attemptStart.set(attemptKey, event.at);
      // A retry's backoff is a deadline too: the alarm should start the next attempt when it is due.
      if (event.type === "step_retry_scheduled" && typeof event.data?.nextRetryAt === "number") {
        retryDueAt.set(event.stepId, { at: event.data.nextRetryAt, kind: event.data.kind });
      }
      if (event.type === "compensation_started") retryDueAt.clear(); // pending action retries are cancelled
      if (event.type === "step_scheduled" && retryDueAt.has(event.stepId)) {
        const due = retryDueAt.get(event.stepId);
        if (due.kind === event.data?.kind) retryLateness.push(Math.max(0, event.at - due.at));
        retryDueAt.delete(event.stepId);
      }
      if (DETECTION_TYPES.has(event.type) && typeof event.data?.overdueMs === "number") {
        const overdue = event.data.overdueMs;
        detection.push(overdue);
        // step_stalled carries no `timeout`: its kind is the view's, "stalled".
        const kind = event.data.timeout ?? (event.type === "step_stalled" ? "stalled" : event.type);
        (detectionByKind[kind] ??= []).push(overdue);
        const deadlineAt = event.data.deadlineAt;
        // A deadline just before the kill is hit too: its alarm may not have run yet when the process died.
        const inOutage = outage && typeof deadlineAt === "number" && deadlineAt >= outage.from - OUTAGE_LEAD_MS && deadlineAt <= outage.to;
        if (!inOutage) detectionOutsideOutage.push(overdue);
        slowest.push({ id, stepId: event.stepId, attempt: event.attempt, type: event.type, overdueMs: overdue, deadlineAt, inOutage: Boolean(inOutage) });
      }
      // Recovery is measured for actions only: from the start of the step's first failed attempt.
      if (FAILURE_TYPES.has(event.type) && attemptKind.get(attemptKey) !== "compensation" && !firstFailure.has(event.stepId)) {
        firstFailure.set(event.stepId, attemptStart.get(attemptKey) ?? event.at);
      }
      if (event.type === "step_succeeded" && firstFailure.has(event.stepId)) {
        recovery.push(event.at - firstFailure.get(event.stepId));
        firstFailure.delete(event.stepId);
      }
    }
    if (view?.endedAt) {
      durations.push(view.endedAt - view.createdAt);
      longest.push({ id, durationMs: view.endedAt - view.createdAt, events });
    }
    for (const step of view?.steps ?? []) {
      const actions = step.attempts.filter((a) => (a.kind ?? "action") === "action").length;
      const compensations = step.attempts.filter((a) => a.kind === "compensation").length;
      if (actions > 0) {
        actionAttempts.push(actions);
        actionAttemptsHistogram[actions] = (actionAttemptsHistogram[actions] ?? 0) + 1;
      }
      if (compensations > 0) compensationAttempts.push(compensations);
    }
  }

  return {
    detectionLatencyMs: summarize(detection),
    detectionLatencyOutsideRestartMs: summarize(detectionOutsideOutage),
    detectionLatencyByTimeoutMs: Object.fromEntries(Object.entries(detectionByKind).map(([kind, values]) => [kind, summarize(values)])),
    // The slowest detections the restart does not explain come first: those are the ones to look into.
    slowestDetections: [...slowest.filter((d) => !d.inOutage), ...slowest.filter((d) => d.inOutage)]
      .sort((a, b) => Number(a.inOutage) - Number(b.inOutage) || b.overdueMs - a.overdueMs)
      .slice(0, 8),
    recoveryMs: summarize(recovery),
    retryStartLatenessMs: summarize(retryLateness),
    workflowDurationMs: summarize(durations),
    // The slowest workflows' histories, one line per event, to see where the time went.
    slowestWorkflows: longest
      .sort((a, b) => b.durationMs - a.durationMs)
      .slice(0, 3)
      .map(({ id, durationMs, events }) => ({ id, durationMs, timeline: events.map((e) => timelineLine(e, events[0]?.at ?? e.at)) })),
    actionAttemptsPerStep: summarize(actionAttempts),
    // Steps by how many action attempts they took: {"1": 850, "2": 40, …}.
    actionAttemptsHistogram,
    compensationAttemptsPerStep: summarize(compensationAttempts),
    staleReportRejected: staleReports,
    staleReportRejectedByReport: staleByReport,
    historyEventCounts: eventCounts,
  };
}

function timelineLine(event, origin) {
  const subject = event.stepId ? ` ${event.stepId}#${event.attempt}` : "";
  const data = event.data ? ` ${JSON.stringify(event.data).slice(0, 160)}` : "";
  return `+${event.at - origin} ${event.type}${subject}${data}`;
}
