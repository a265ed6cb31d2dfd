/**
 * "Why is it stuck?" answered from the state instead of the logs: what each open step waits for, since when and
 * until when, the next deadline and why, and the liveness invariant checked. Pure: the object hands in what only
 * storage knows (its alarm, its recent decisions).
 */
import { deadlineOfStep, nextDeadline, type NextDeadline } from "./deadlines";
import { findStepPlan } from "../language/plan";
import { itemCounts, STEP_BLOCKED_REASONS, STEP_WAIT_REASONS, stepKindOf, type StepBlockedReason } from "../language/steps";
import { activeAttempt, isTerminal, latestAttempt, type StepState, type WorkflowState, type WorkflowStatus } from "./state";
import type { HistoryEventType } from "./history";

/** The step kinds add theirs (a sleep's `sleeping`, a wait's `waiting_for_event`): see steps/. */
export const BLOCKED_REASONS = [
  "scheduled_start",
  "waiting_for_agent",
  "waiting_for_worker",
  "running",
  "backing_off",
  ...STEP_BLOCKED_REASONS,
  "circuit_open",
  "paused",
  "needs_operator",
] as const;
export type BlockedReason = (typeof BLOCKED_REASONS)[number];

export interface BlockedOn {
  stepId?: string;
  reason: BlockedReason;
  since: number;
  until?: number;
  detail: string;
  /** The pool a worker task waits in (`waiting_for_worker`). */
  pool?: string;
}

/** History types that are the supervisor's own decisions: what the diagnosis lists as recent. */
export const SUPERVISOR_DECISIONS: readonly HistoryEventType[] = [
  "step_heartbeat_missed",
  "step_timed_out",
  "step_stalled",
  "step_retry_scheduled",
  "step_verified",
  "step_parked",
  "circuit_opened",
  "circuit_closed",
  "wait_timed_out",
  "workflow_timed_out",
  "workflow_escalated",
  "escalation_expired",
  "compensation_started",
  "task_resent",
  "task_reassigned",
  "task_dead_lettered",
  "workflow_start_deferred",
];

export interface Diagnosis<E = unknown> {
  status: WorkflowStatus;
  healthy: boolean;
  blockedOn: BlockedOn[];
  nextDeadline: NextDeadline | null;
  alarmAt: number | null;
  attempts: Record<string, { used: number; max: number }>;
  recentDecisions: E[];
  problems: string[];
}

/** What an open workflow is waiting for, step by step, then the liveness invariant over the whole. */
export function diagnose<E>(state: WorkflowState, found: { alarmAt: number | null; recentDecisions: E[] }): Diagnosis<E> {
  const deadline = nextDeadline(state) ?? null;
  const blockedOn = isTerminal(state.status) ? [] : blockers(state);
  const problems = livenessProblems(state, deadline, found.alarmAt, blockedOn);
  const attempts = Object.fromEntries(
    state.steps.map((step) => [step.id, { used: step.budgetUsed, max: findStepPlan(state.plan, step.id)?.retry.maxAttempts ?? 0 }]),
  );
  return { status: state.status, healthy: problems.length === 0, blockedOn, nextDeadline: deadline, alarmAt: found.alarmAt, attempts, recentDecisions: found.recentDecisions, problems };
}

/** What each open part of an open workflow waits for (the diagnosis' `blockedOn`; the list's summary reads it too). */
export function blockers(state: WorkflowState): BlockedOn[] {
  const found: BlockedOn[] = [];
  if (state.status === "scheduled") found.push(scheduledStart(state));
  if (state.status === "paused") found.push({ reason: "paused", since: state.pausedAt ?? state.updatedAt, detail: "an operator paused the workflow; resume starts what the pause held" });
  if (state.status === "needs_attention") found.push(...awaitingOperator(state));
  for (const step of state.steps) {
    const blocked = stepBlocker(state, step);
    if (blocked) found.push(blocked);
  }
  return found;
}

/** A delayed start waits for its time (or, deferred by back-pressure, for the queue to catch up). */
function scheduledStart(state: WorkflowState): BlockedOn {
  const until = state.startRetryAt ?? state.startAt ?? state.createdAt;
  const detail =
    state.startRetryAt === undefined
      ? "a delayed start: nothing runs before its start time"
      : "its start time passed while the task queue was too far behind for its tenant's starts: it starts once the queue catches up";
  return { reason: "scheduled_start", since: state.createdAt, until, detail };
}

function awaitingOperator(state: WorkflowState): BlockedOn[] {
  const until = state.attentionDeadline;
  const then = state.plan.escalation?.then;
  return state.steps
    .filter((step) => step.status === "failed" && (!state.compensation || state.compensation.queue[0] === step.id))
    .map((step) => ({
      stepId: step.id,
      reason: "needs_operator" as const,
      since: latestAttempt(step)?.endedAt ?? state.updatedAt,
      ...(until === undefined ? {} : { until }),
      detail: `${latestAttempt(step)?.kind === "compensation" ? "its compensation" : "the step"} failed for good (${step.error?.message ?? "no error recorded"}); retry, skip or compensate${then ? `, or "${then}" runs at the deadline` : ""}`,
    }));
}

/** What one step waits for; undefined for a step that is not open (pending on upstream steps, or ended). */
function stepBlocker(state: WorkflowState, step: StepState): BlockedOn | undefined {
  const deadline = deadlineOfStep(state, step);
  const until = deadline ? { until: deadline.at } : {};
  const attempt = activeAttempt(step);
  if (attempt) {
    const which = `attempt ${attempt.n}${attempt.kind === "compensation" ? " of the compensation" : ""}`;
    if (attempt.status === "scheduled" && attempt.pool !== undefined) {
      const pool = attempt.pool;
      return { stepId: step.id, reason: "waiting_for_worker", pool, since: attempt.offeredAt ?? attempt.scheduledAt, ...until, detail: `${which} waits in pool ${pool} for a worker to poll` };
    }
    if (attempt.status === "scheduled") return { stepId: step.id, reason: "waiting_for_agent", since: attempt.sentAt ?? attempt.scheduledAt, ...until, detail: `${which} is queued for an agent` };
    const detail =
      attempt.status === "waiting"
        ? `the remote accepted ${which} (202) and reports through its task token; next deadline: ${deadline?.kind ?? "none"}`
        : `${which} is running; next deadline: ${deadline?.kind ?? "none"}`;
    return { stepId: step.id, reason: "running", since: attempt.startedAt ?? attempt.scheduledAt, ...until, detail };
  }
  if (step.parked) {
    return { stepId: step.id, reason: "circuit_open", since: step.parked.since, until: step.parked.openUntil, detail: `the breaker of ${step.parked.host} is open; the step is parked without using an attempt` };
  }
  if (step.nextRetryAt !== undefined) {
    return { stepId: step.id, reason: "backing_off", since: latestAttempt(step)?.endedAt ?? state.updatedAt, until: step.nextRetryAt, detail: `attempt ${step.attempt} failed (${step.error?.message ?? "no error recorded"}); the next one starts then` };
  }
  return kindTimerBlocker(state, step, until) ?? mapBlocker(state, step);
}

/** A map runs through its items: each in flight is named on its own line; the map says how far it got. */
function mapBlocker(state: WorkflowState, step: StepState): BlockedOn | undefined {
  if (step.kind !== "map" || !step.items || (step.status !== "running" && step.status !== "compensating")) return undefined;
  const { total, running, succeeded, failed } = itemCounts(step.items);
  const detail =
    step.status === "running"
      ? `a map: ${running} of ${total} items in flight, ${succeeded} succeeded, ${failed} failed`
      : `a map undoing its items, newest first; ${succeeded} of ${total} had succeeded`;
  return { stepId: step.id, reason: "running", since: state.updatedAt, detail };
}

/**
 * A step whose kind's timer runs (a sleep, a wait for an event), or that waits on another party (a child
 * workflow): what it waits for, in its kind's words.
 */
function kindTimerBlocker(state: WorkflowState, step: StepState, until: { until?: number }): BlockedOn | undefined {
  const plan = findStepPlan(state.plan, step.id);
  const kind = plan && stepKindOf(plan.kind);
  const words = kind?.timer ?? kind?.waits;
  if (!plan || !words || step.status !== words.status) return undefined;
  return { stepId: step.id, reason: words.blockedReason, since: step.waitingSince ?? state.updatedAt, ...until, detail: words.waitsFor(plan, state.id) };
}

/** Outside parties a workflow may wait on without a deadline of its own: people (and, by step, its children). */
const WAITS_ON_PEOPLE: ReadonlySet<WorkflowStatus> = new Set(["needs_attention", "paused"]);

/**
 * The liveness invariant: every open workflow has a next deadline or names the outside party it waits for, and
 * the alarm is never later than that deadline (else nothing would wake the supervisor in time).
 */
export function livenessProblems(state: WorkflowState, deadline: NextDeadline | null, alarmAt: number | null, blockedOn: BlockedOn[]): string[] {
  if (isTerminal(state.status)) return [];
  const problems: string[] = [];
  // The user's workers are an outside party too: a task with no fallback waits in its pool for as long as it takes.
  const waitsOnParty = blockedOn.some((entry) => entry.reason === "waiting_for_worker" || STEP_WAIT_REASONS.includes(entry.reason as StepBlockedReason));
  if (!deadline && !WAITS_ON_PEOPLE.has(state.status) && !waitsOnParty) {
    problems.push(`the workflow is ${state.status} with no next deadline and no outside party it waits for: nothing would ever move it`);
  }
  if (deadline && alarmAt === null) problems.push(`no alarm is set, though the next deadline is at ${deadline.at} (${deadline.reason})`);
  if (deadline && alarmAt !== null && alarmAt > deadline.at) problems.push(`the alarm at ${alarmAt} is later than the next deadline at ${deadline.at} (${deadline.reason})`);
  const named = new Set(blockedOn.map((entry) => entry.stepId));
  for (const step of state.steps) {
    if (OPEN_STEP_STATUSES.has(step.status) && !named.has(step.id)) problems.push(`step ${step.id} is ${step.status} but nothing is under way for it`);
  }
  return problems;
}

/** Step statuses in which something must be under way: an attempt, a backoff, a timer or a breaker. */
const OPEN_STEP_STATUSES: ReadonlySet<string> = new Set(["scheduled", "running", "waiting", "sleeping", "retrying", "compensating"]);
