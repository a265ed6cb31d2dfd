/**
 * Every event a workflow's history can hold, with the fields each carries: one list, so a new step kind or
 * supervisor decision adds its events here and cannot write a misspelt or shapeless one. The shell stamps
 * `seq` and `at` when it appends them.
 */
import type { AttemptKind, CompensationState, ParentRef, PinnedDefinition, StepError, WorkflowStatus } from "./state";
import type { OnParentClose, StepKindName } from "../language/steps";
import type { ActedBy } from "../language/operator-commands";

type OfStep = { stepId: string };
type OfAttempt = { stepId: string; attempt: number };
/** Events of a step's outcome: sleeps and waits have no attempts, so for them there is no number. */
type OfOutcome = OfStep & { attempt?: number };
type Timeout = "schedule_to_start" | "start_to_close" | "heartbeat";
/** What an operator (or an expired escalation, on their behalf) does to a workflow that waits on them. */
export type EscalationAction = "compensate" | "fail" | "skip" | "retry";
/** An operator's command (or event) records who acted (`actor`) and why (`reason`, when given) in its data. */
type ByOperator = ActedBy;

interface HistoryEventFields {
  /** `startAt`: a scheduled workflow's start, made then (`deferredMs` later when back-pressure deferred it). */
  workflow_started: { data: { name: string; definition?: PinnedDefinition; schedule?: string; parent?: ParentRef; startAt?: number; deferredMs?: number } };
  /** Created with a delayed start: nothing runs until `startAt`. */
  workflow_scheduled: { data: { name: string; startAt: number; definition?: PinnedDefinition; schedule?: string; parent?: ParentRef } };
  /** Its start fell due while back-pressure refused starts like it: tried again at `retryAt` (recorded once). */
  workflow_start_deferred: { data: { lagMs: number; retryAt: number } };
  workflow_timed_out: { data: { deadlineAt: number | undefined } };
  workflow_completed: object;
  workflow_failed: { data: { error: StepError | undefined } };
  workflow_escalated: OfStep & { data: { phase: AttemptKind; error: StepError } };
  workflow_compensated: object;
  workflow_cancelled: object;
  compensation_started: { data: { steps: string[]; endStatus: CompensationState["endStatus"] } };
  workflow_paused: { data: ByOperator };
  workflow_resumed: { data: { pausedMs: number } & ByOperator };
  workflow_terminated: { data: ByOperator };
  workflow_redriven: { data: { fromStep?: string; steps: string[]; redriveCount: number } & ByOperator };
  /** The end's notice (the start's `notify`) was posted: the receiver answered 2xx on try `attempts`. */
  workflow_notified: { data: { noticeId: string; status: WorkflowStatus; attempts: number; httpStatus: number } };
  /** The end's notice was given up: its URL was refused, or it failed `attempts` times. */
  workflow_notify_failed: { data: { noticeId: string; status: WorkflowStatus; attempts: number; error: string; httpStatus?: number } };
  operator_action: Partial<OfStep> & { data: { action: "cancel" | "retry_step" | "skip_step" | "compensate" } & ByOperator };
  step_sleeping: OfStep & { data: { until: number } };
  /** A map started its items (`again`: a redrive or retry runs again this many that did not succeed). */
  map_started: OfStep & { data: { total: number; maxConcurrency: number; again?: number } };
  step_waiting_for_event: OfStep & { data: { event: string; timeoutAt: number } };
  step_skipped: OfStep & { data: { reason: "when" | "wait_timed_out" } };
  wait_timed_out: OfStep & { data: { event: string; onTimeout: "fail" | "skip"; timeoutAt: number; overdueMs: number } };
  event_received: { data: { event: string; id?: string; buffered: boolean } & ByOperator };
  event_consumed: OfStep & { data: { event: string; id?: string } };
  step_scheduled: OfAttempt & { data: { kind: AttemptKind } };
  step_started: OfAttempt & { data: { kind: AttemptKind } };
  step_waiting: OfAttempt;
  step_succeeded: OfOutcome;
  step_compensated: OfAttempt;
  /** `kind` is the attempt's, or for a step without attempts the step's kind. */
  step_failed: OfOutcome & { data: { kind: AttemptKind | StepKindName; error: StepError; final: boolean } };
  step_retry_scheduled: OfAttempt & { data: { kind: AttemptKind | StepKindName; delayMs: number; nextRetryAt: number } };
  /** A `workflow` step asked for its child's start (an outbox row) and waits for the child to end. */
  step_waiting_for_child: OfAttempt & { data: { childId: string; depth: number } };
  /** The child's start was made (`created`), or found made by this step before (a start delivered twice). */
  child_workflow_started: OfAttempt & { data: { childId: string; created: boolean } };
  /** The child's object said it ended; the step ends with it (its output, or its error). */
  child_workflow_ended: OfAttempt & { data: { childId: string; status: WorkflowStatus } };
  /** The parent fenced the step while its child was open: the child is cancelled, terminated or left running. */
  child_workflow_closed: OfAttempt & { data: { childId: string; action: OnParentClose } };
  step_heartbeat_missed: OfAttempt & { data: { timeout: Timeout; deadlineAt: number; overdueMs: number } };
  step_timed_out: OfAttempt & { data: { timeout: Timeout; deadlineAt: number; overdueMs: number } };
  stale_report_rejected: OfAttempt & { data: { report: string; currentAttempt: number } };
  task_dead_lettered: OfAttempt & { data: { outcome: string; deadLetters?: number } };
  task_resent: OfAttempt & { data: { reason: string; waitedMs: number; queueLagMs: number | null } };
  /** No worker of its pool took the task within `fallback.afterMs`: it moved to the next pool, no attempt used. */
  task_reassigned: OfAttempt & { data: { from: string; to: string; waitedMs: number } };
  /** Heartbeats went on but their progress did not change for `progressMs`: ended like a timeout. */
  step_stalled: OfAttempt & { data: { progressMs: number; progressAt: number; deadlineAt: number; overdueMs: number } };
  /** After an ambiguous attempt the step's `verify` call found the effect had landed: no retry. */
  step_verified: OfAttempt & { data: { status: number } };
  /** This attempt's failure opened the breaker of its target host (for every workflow of the tenant). */
  circuit_opened: OfAttempt & { data: { host: string; failures: number; openUntil: number } };
  /** The attempt was due for a host whose breaker is open: set aside without using an attempt. */
  step_parked: OfAttempt & { data: { host: string; kind: AttemptKind; openUntil: number } };
  /** The breaker closed and released the parked step. */
  circuit_closed: OfStep & { data: { host: string; parkedMs: number } };
  /** No operator acted before `attentionDeadline`: the escalation's default action ran. */
  escalation_expired: Partial<OfStep> & { data: { then: EscalationAction; deadlineAt: number; overdueMs: number } };
}

export type HistoryEventType = keyof HistoryEventFields;

/** Every type, at run time (webhook filters, validation); the record makes the compiler check it is complete. */
const EVERY_TYPE: Record<HistoryEventType, true> = {
  workflow_started: true, workflow_scheduled: true, workflow_start_deferred: true, workflow_timed_out: true, workflow_completed: true, workflow_failed: true, workflow_escalated: true,
  workflow_compensated: true, workflow_cancelled: true, compensation_started: true, workflow_paused: true, workflow_resumed: true,
  workflow_terminated: true, workflow_redriven: true, operator_action: true, step_sleeping: true, map_started: true, step_waiting_for_event: true,
  step_skipped: true, wait_timed_out: true, event_received: true, event_consumed: true, step_scheduled: true, step_started: true,
  step_waiting: true, step_succeeded: true, step_compensated: true, step_failed: true, step_retry_scheduled: true,
  step_heartbeat_missed: true, step_timed_out: true, stale_report_rejected: true, task_dead_lettered: true, task_resent: true, task_reassigned: true,
  step_stalled: true, step_verified: true, circuit_opened: true, step_parked: true, circuit_closed: true, escalation_expired: true,
  step_waiting_for_child: true, child_workflow_started: true, child_workflow_ended: true, child_workflow_closed: true,
  workflow_notified: true, workflow_notify_failed: true,
};
export const HISTORY_EVENT_TYPES = Object.keys(EVERY_TYPE) as HistoryEventType[];

/** One history entry: its type and exactly the fields that type carries. */
export type HistoryEntry = { [T in HistoryEventType]: { type: T } & HistoryEventFields[T] }[HistoryEventType];

/** Any entry, seen through the fields entries have in common: how transitions hand them on to be stored. */
export interface HistoryEntryFields {
  type: HistoryEventType;
  stepId?: string;
  attempt?: number;
  data?: Record<string, unknown>;
}
