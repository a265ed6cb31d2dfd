// A history event in a few words, for the history list and the diagnosis's recent decisions.
import { duration } from "../format.js";
import { errorWords } from "./timeline-model.js";
import { preciseClock } from "./time.js";

const SUMMARIES = {
  workflow_started: (data) =>
    `definition ${data.definition?.name ?? data.name}${data.definition?.version ? ` v${data.definition.version}` : ""}${data.schedule ? `, fired by schedule ${data.schedule}` : ""}${data.parent ? `, child of ${data.parent.id} (step ${data.parent.stepId})` : ""}${data.startAt === undefined ? "" : `, scheduled for ${preciseClock(data.startAt)}`}${data.deferredMs ? ` (deferred ${duration(data.deferredMs)} by back-pressure)` : ""}`,
  workflow_scheduled: (data) => `definition ${data.definition?.name ?? data.name}; starts ${preciseClock(data.startAt)}`,
  workflow_start_deferred: (data) => `the task queue was ${duration(data.lagMs)} behind; tried again ${preciseClock(data.retryAt)}`,
  workflow_failed: (data) => errorWords(data.error),
  workflow_escalated: (data) => `${data.phase === "compensation" ? "compensation " : ""}failed for good: ${errorWords(data.error)}`,
  workflow_timed_out: (data) => `deadline ${preciseClock(data.deadlineAt)}`,
  workflow_resumed: (data) => `after ${duration(data.pausedMs)} paused`,
  workflow_terminated: (data) => data.reason ?? "",
  workflow_notified: (data) => `end notice ${data.noticeId} (${data.status}) delivered on try ${data.attempts}, answered ${data.httpStatus}`,
  workflow_notify_failed: (data) => `end notice ${data.noticeId} (${data.status}) given up after ${data.attempts} ${data.attempts === 1 ? "try" : "tries"}: ${data.error}`,
  workflow_redriven: (data) => `redrive ${data.redriveCount}: ${data.steps.join(", ") || "no steps"} run again${data.fromStep ? ` (from ${data.fromStep})` : ""}`,
  compensation_started: (data) => `undo ${data.steps.join(", ") || "nothing"}, then ${data.endStatus}`,
  operator_action: (data) => data.action.replaceAll("_", " "),
  step_scheduled: (data) => data.kind,
  step_started: (data) => data.kind,
  step_sleeping: (data) => `until ${preciseClock(data.until)}`,
  step_waiting_for_event: (data) => `for "${data.event}", times out at ${preciseClock(data.timeoutAt)}`,
  step_skipped: (data) => (data.reason === "when" ? "its condition was false" : "the wait timed out"),
  wait_timed_out: (data) => `"${data.event}" did not come; ${data.onTimeout}`,
  event_received: (data) => `"${data.event}"${data.id ? ` (id ${data.id})` : ""}${data.buffered ? ", kept in the inbox" : ""}`,
  event_consumed: (data) => `"${data.event}"`,
  step_failed: (data) => `${data.final ? "for good: " : ""}${errorWords(data.error)}`,
  step_retry_scheduled: (data) => `next attempt in ${duration(data.delayMs)}, at ${preciseClock(data.nextRetryAt)}`,
  step_heartbeat_missed: (data) => `no heartbeat by ${preciseClock(data.deadlineAt)} (noticed ${duration(data.overdueMs)} later)`,
  step_timed_out: (data) => `${data.timeout.replaceAll("_", " ")} deadline ${preciseClock(data.deadlineAt)} passed`,
  step_stalled: (data) => `progress unchanged for ${duration(data.progressMs)}`,
  stale_report_rejected: (data) => `${data.report} from an old attempt (current: ${data.currentAttempt})`,
  step_verified: (data) => `verify answered ${data.status}: the effect had landed`,
  circuit_opened: (data) => `${data.host} after ${data.failures} failures, until ${preciseClock(data.openUntil)}`,
  step_parked: (data) => `${data.host} is open until ${preciseClock(data.openUntil)}`,
  circuit_closed: (data) => `${data.host}, parked ${duration(data.parkedMs)}`,
  escalation_expired: (data) => `nobody acted; "${data.then}" ran`,
  task_resent: (data) => `message sent again (${data.reason})`,
  task_dead_lettered: (data) => `dead-lettered: ${data.outcome}`,
  task_reassigned: (data) => `no worker of pool ${data.from} took it in ${duration(data.waitedMs)}: moved to pool ${data.to}`,
  step_waiting_for_child: (data) => `child ${data.childId} (depth ${data.depth})`,
  child_workflow_started: (data) => `${data.childId}${data.created ? "" : " (already started by this step)"}`,
  child_workflow_ended: (data) => `${data.childId} ended ${data.status}`,
  child_workflow_closed: (data) => `${data.childId}: ${data.action === "abandon" ? "left running" : data.action}`,
};

/** A short description of an event's data; a compact JSON for types without their own words. */
export function eventSummary(event) {
  if (!event.data) return "";
  const summary = SUMMARIES[event.type];
  try {
    if (summary) return summary(event.data);
  } catch {
    // An older or newer shape of the data than these words expect: fall back to the JSON.
  }
  const text = JSON.stringify(event.data);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

/** "step_retry_scheduled" → "step retry scheduled". */
export function eventTypeWords(type) {
  return type.replaceAll("_", " ");
}
