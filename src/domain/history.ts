/**
 * Every event a workflow's history can hold, with the fields each carries: one list, so a new step kind or
 * supervisor decision adds its events here and cannot write a misspelt or shapeless one. The shell stamps
 * `seq` and `at` when it appends them.
 */
import type { AttemptKind, CompensationState, PinnedDefinition, StepError } from "./state";

type OfStep = { stepId: string };
type OfAttempt = { stepId: string; attempt: number };
/** Events of a step's outcome: sleeps and waits have no attempts, so for them there is no number. */
type OfOutcome = OfStep & { attempt?: number };
type Timeout = "schedule_to_start" | "start_to_close" | "heartbeat";

interface HistoryEventFields {
  workflow_started: { data: { name: string; definition?: PinnedDefinition; schedule?: string } };
  workflow_timed_out: { data: { deadlineAt: number | undefined } };
  workflow_completed: object;
  workflow_failed: { data: { error: StepError | undefined } };
  workflow_escalated: OfStep & { data: { phase: AttemptKind; error: StepError } };
  workflow_compensated: object;
  workflow_cancelled: object;
  compensation_started: { data: { steps: string[]; endStatus: CompensationState["endStatus"] } };
  workflow_paused: object;
  workflow_resumed: { data: { pausedMs: number } };
  workflow_terminated: { data: { reason?: string } };
  workflow_redriven: { data: { fromStep?: string; steps: string[]; redriveCount: number } };
  operator_action: Partial<OfStep> & { data: { action: "cancel" | "retry_step" | "skip_step" | "compensate" } };
  step_sleeping: OfStep & { data: { until: number } };
  step_waiting_for_event: OfStep & { data: { event: string; timeoutAt: number } };
  step_skipped: OfStep & { data: { reason: "when" | "wait_timed_out" } };
  wait_timed_out: OfStep & { data: { event: string; onTimeout: "fail" | "skip"; timeoutAt: number; overdueMs: number } };
  event_received: { data: { event: string; id?: string; buffered: boolean } };
  event_consumed: OfStep & { data: { event: string; id?: string } };
  step_scheduled: OfAttempt & { data: { kind: AttemptKind } };
  step_started: OfAttempt & { data: { kind: AttemptKind } };
  step_waiting: OfAttempt;
  step_succeeded: OfOutcome;
  step_compensated: OfAttempt;
  /** `kind` is the attempt's, or for a step without attempts the step's kind. */
  step_failed: OfOutcome & { data: { kind: AttemptKind | "sleep" | "waitForEvent"; error: StepError; final: boolean } };
  step_retry_scheduled: OfAttempt & { data: { kind: AttemptKind; delayMs: number; nextRetryAt: number } };
  step_heartbeat_missed: OfAttempt & { data: { timeout: Timeout; deadlineAt: number; overdueMs: number } };
  step_timed_out: OfAttempt & { data: { timeout: Timeout; deadlineAt: number; overdueMs: number } };
  stale_report_rejected: OfAttempt & { data: { report: string; currentAttempt: number } };
  task_dead_lettered: OfAttempt & { data: { outcome: string; deadLetters?: number } };
  task_resent: OfAttempt & { data: { reason: string; waitedMs: number; queueLagMs: number | null } };
}

export type HistoryEventType = keyof HistoryEventFields;

/** One history entry: its type and exactly the fields that type carries. */
export type HistoryEntry = { [T in HistoryEventType]: { type: T } & HistoryEventFields[T] }[HistoryEventType];

/** Any entry, seen through the fields entries have in common: how transitions hand them on to be stored. */
export interface HistoryEntryFields {
  type: HistoryEventType;
  stepId?: string;
  attempt?: number;
  data?: Record<string, unknown>;
}
