import type { BackPressure, QueueLagSample } from "../admission/back-pressure";
import { findStepPlan, type StepPlan } from "../language/plan";
import { activeAttempt, isTerminal, type Attempt, type StepState, type WorkflowState } from "./state";
import type { TransitionContext } from "./context";
import { failAttempt, failWorkflow } from "./failure";
import { beginCompensation } from "./saga";
import { checkQueuedAttempt, queueCheckAt } from "./queued-attempts";
import { reassignAt, workerActionOf } from "./pool-placement";
import { reassignTask } from "./pool-offers";
import { afterStepChange } from "./dispatch";
import { startStep, stepTimerDue } from "./steps";
import { expireEscalation } from "./escalation";
import { scheduledStartAt, startWhenDue } from "./scheduled-start";
import { STEP_TIMER_DEADLINES, stepKindOf, type StepTimerDeadline } from "../language/steps";

type TimeoutKind = "schedule_to_start" | "start_to_close" | "heartbeat" | "stalled";
/** Every reason a step needs the supervisor: its attempt's deadlines, a lost-message check, or its kind's timer. */
type DeadlineKind = TimeoutKind | "queue_check" | "reassign" | "retry" | StepTimerDeadline;
export interface Deadline {
  at: number;
  kind: DeadlineKind;
}
/**
 * The workflow's own deadlines: its timeout, how long it may wait on an operator before the escalation's default
 * runs, and a scheduled workflow's start.
 */
type WorkflowDeadlineKind = "workflow_timeout" | "attention_deadline" | "scheduled_start";
/** The earliest deadline of a workflow, why, and whose: what the alarm is set for and the diagnosis names. */
export interface NextDeadline {
  at: number;
  reason: DeadlineKind | WorkflowDeadlineKind;
  stepId?: string;
}

/**
 * Timers a paused workflow holds: each would start or finish work. An attempt's own deadlines are not held (a
 * running attempt is still supervised while paused), nor is the workflow's timeout.
 */
const HELD_WHILE_PAUSED: ReadonlySet<DeadlineKind> = new Set(["retry", ...STEP_TIMER_DEADLINES]);

/**
 * When an active attempt needs the supervisor next, and why. A queued attempt has no deadline of its own unless
 * its step sets `scheduleToStartMs` (waiting in our queue is not the attempt failing); the supervisor only
 * checks now and then that its message was not lost.
 */
function attemptDeadline(attempt: Attempt, plan: StepPlan): Deadline | undefined {
  const { timeouts } = plan;
  if (attempt.status === "scheduled") {
    const check = waitingDeadline(attempt, plan);
    if (timeouts.scheduleToStartMs === undefined) return check;
    const timeout = { at: attempt.scheduledAt + timeouts.scheduleToStartMs, kind: "schedule_to_start" as const };
    return check === undefined || timeout.at <= check.at ? timeout : check;
  }
  const startedAt = attempt.startedAt ?? attempt.scheduledAt;
  const close = startedAt + timeouts.startToCloseMs;
  const heartbeat = (attempt.lastHeartbeatAt ?? startedAt) + timeouts.heartbeatMs;
  let earliest: Deadline = heartbeat < close ? { at: heartbeat, kind: "heartbeat" } : { at: close, kind: "start_to_close" };
  if (timeouts.progressMs !== undefined && attempt.progressAt !== undefined) {
    const stall = attempt.progressAt + timeouts.progressMs;
    if (stall < earliest.at) earliest = { at: stall, kind: "stalled" };
  }
  return earliest;
}

/**
 * A queued attempt's lost-message check; a worker task's move to its next pool (none when it has no next: a pool
 * keeps what it was offered, so nothing is checked).
 */
function waitingDeadline(attempt: Attempt, plan: StepPlan): Deadline | undefined {
  if (attempt.pool === undefined) return { at: queueCheckAt(attempt), kind: "queue_check" };
  const at = reassignAt(attempt, workerActionOf(plan, attempt.kind));
  return at === undefined ? undefined : { at, kind: "reassign" };
}

/**
 * The one place a step's next deadline comes from: its active attempt's, else its retry backoff, else its kind's
 * timer (a sleep's end, a wait's timeout). Undefined for a step nothing will happen to without a report, an event
 * or an operator.
 */
function stepDeadline(step: StepState, plan: StepPlan, paused: boolean): Deadline | undefined {
  const attempt = activeAttempt(step);
  let deadline: Deadline | undefined;
  if (attempt) deadline = attemptDeadline(attempt, plan);
  else if (step.nextRetryAt !== undefined) deadline = { at: step.nextRetryAt, kind: "retry" };
  else if (step.timerAt !== undefined) deadline = timerDeadline(step.timerAt, plan);
  return deadline && paused && HELD_WHILE_PAUSED.has(deadline.kind) ? undefined : deadline;
}

/** The deadline of the step's own timer, named by its kind. */
function timerDeadline(at: number, plan: StepPlan): Deadline | undefined {
  const timer = stepKindOf(plan.kind).timer;
  return timer && { at, kind: timer.deadline };
}

/** A step's next deadline in its workflow (none while paused, for what a pause holds). */
export function deadlineOfStep(state: WorkflowState, step: StepState): Deadline | undefined {
  const plan = findStepPlan(state.plan, step.id);
  return plan && stepDeadline(step, plan, state.status === "paused");
}

/** The workflow's own deadline, which stops counting once it unwinds (compensation has its own retry budgets). */
function workflowDeadline(state: WorkflowState): number | undefined {
  return state.compensation ? undefined : state.deadlineAt;
}

/** How long a workflow that waits on an operator waits before its escalation's default action runs. */
function attentionDeadline(state: WorkflowState): number | undefined {
  return state.status === "needs_attention" ? state.attentionDeadline : undefined;
}

/** The earliest deadline with its reason, or undefined when nothing is pending (terminal, or waiting on people). */
export function nextDeadline(state: WorkflowState): NextDeadline | undefined {
  if (isTerminal(state.status)) return undefined;
  // Nothing of a scheduled workflow runs before its start: that is its one deadline.
  const start = scheduledStartAt(state);
  if (start !== undefined) return { at: start, reason: "scheduled_start" };
  let earliest: NextDeadline | undefined;
  const own = workflowDeadline(state);
  if (own !== undefined) earliest = earlier(earliest, { at: own, reason: "workflow_timeout" });
  const attention = attentionDeadline(state);
  if (attention !== undefined) earliest = earlier(earliest, { at: attention, reason: "attention_deadline" });
  for (const step of state.steps) {
    const deadline = deadlineOfStep(state, step);
    if (deadline) earliest = earlier(earliest, { at: deadline.at, reason: deadline.kind, stepId: step.id });
  }
  return earliest;
}

/**
 * Of two deadlines the earlier, the first on a tie. A function of its own rather than a closure: every commit asks,
 * and the bundle names each closure as it is made (keepNames), a cost paid per call.
 */
function earlier(current: NextDeadline | undefined, candidate: NextDeadline): NextDeadline {
  return current && current.at <= candidate.at ? current : candidate;
}

/** The earliest moment the supervisor must act: what the alarm is set for. */
export function nextDeadlineAt(state: WorkflowState): number | undefined {
  return nextDeadline(state)?.at;
}

/**
 * The supervisor's tick: the whole-workflow deadline first, then every step's deadline that passed. Safe to run
 * at any time and any number of times: it only acts on what is due (and, while paused, on what is not held).
 */
export function superviseDeadlines(ctx: TransitionContext, queueLag?: QueueLagSample, startAdmission?: BackPressure): void {
  const { state, now } = ctx;
  if (isTerminal(state.status)) return;
  if (state.status === "scheduled") {
    startWhenDue(ctx, startAdmission);
    if (state.status === "scheduled") return;
  }
  const own = workflowDeadline(state);
  if (own !== undefined && now >= own) {
    timeOutWorkflow(ctx);
    if (isTerminal(state.status)) return;
  }
  const attention = attentionDeadline(state);
  if (attention !== undefined && now >= attention) expireEscalation(ctx, attention);
  // Acting on one deadline can make another due at once (a timeout whose retry has no backoff), so this goes
  // round again; every action moves its step's deadline past `now` or ends it, so a few rounds are plenty.
  for (let round = 0; round < MAX_ROUNDS && actOnDueSteps(ctx, queueLag); round++);
  afterStepChange(ctx);
}

const MAX_ROUNDS = 4;

/**
 * What ends work comes before what starts it: a timeout or a failed wait may unwind the workflow, and an attempt
 * started earlier in the same tick would only be fenced again at once.
 */
const ORDER: readonly (readonly DeadlineKind[])[] = [
  ["schedule_to_start", "start_to_close", "heartbeat", "stalled", "queue_check", "reassign"],
  STEP_TIMER_DEADLINES,
  ["retry"],
];

/** Acts on every step whose deadline passed, in ORDER; whether there was any. */
function actOnDueSteps(ctx: TransitionContext, queueLag?: QueueLagSample): boolean {
  let acted = false;
  for (const kinds of ORDER) {
    for (const step of ctx.state.steps) {
      if (isTerminal(ctx.state.status)) return false;
      const deadline = stepDeadline(step, ctx.plan(step.id), ctx.state.status === "paused");
      if (!deadline || deadline.at > ctx.now || !kinds.includes(deadline.kind)) continue;
      actOnDeadline(ctx, step, deadline, queueLag);
      acted = true;
    }
  }
  return acted;
}

function actOnDeadline(ctx: TransitionContext, step: StepState, deadline: Deadline, queueLag?: QueueLagSample): void {
  const attempt = activeAttempt(step);
  switch (deadline.kind) {
    case "queue_check":
      if (attempt) checkQueuedAttempt(ctx, step, attempt, queueLag);
      return;
    case "reassign":
      if (attempt) reassignTask(ctx, step, attempt);
      return;
    case "schedule_to_start":
    case "start_to_close":
    case "heartbeat":
    case "stalled":
      if (attempt) timeOutAttempt(ctx, step, attempt, deadline.kind, deadline.at);
      return;
    case "retry":
      retryWhenDue(ctx, step);
      return;
    default:
      stepTimerDue(ctx, step);
      return;
  }
}

const TIMEOUT_MESSAGES: Record<TimeoutKind, string> = {
  heartbeat: "no heartbeat within heartbeatMs",
  start_to_close: "attempt exceeded startToCloseMs",
  schedule_to_start: "attempt exceeded scheduleToStartMs",
  stalled: "heartbeats went on but progress did not change within progressMs",
};

function timeOutAttempt(ctx: TransitionContext, step: StepState, attempt: Attempt, kind: TimeoutKind, deadlineAt: number): void {
  const overdueMs = ctx.now - deadlineAt;
  const fields = { stepId: step.id, attempt: attempt.n };
  if (kind === "stalled") {
    const { progressMs = 0 } = ctx.plan(step.id).timeouts;
    ctx.record({ type: "step_stalled", ...fields, data: { progressMs, progressAt: attempt.progressAt ?? deadlineAt - progressMs, deadlineAt, overdueMs } });
  } else {
    ctx.record({ type: kind === "heartbeat" ? "step_heartbeat_missed" : "step_timed_out", ...fields, data: { timeout: kind, deadlineAt, overdueMs } });
  }
  failAttempt(ctx, step, attempt, { message: TIMEOUT_MESSAGES[kind], retryable: true, timeout: kind }, { timedOut: true });
}

/** A backoff that passed starts the step again as its kind (an action's next attempt, a fresh child), or the compensation at the saga's head. */
export function retryWhenDue(ctx: TransitionContext, step: StepState): void {
  const { compensation } = ctx.state;
  // A parked step's backstop (its breaker's release was lost) or its release: either way it waits no longer.
  const wasParked = step.parked !== undefined;
  delete step.parked;
  if (step.status === "retrying" && !compensation) startStep(ctx, step);
  else if (step.status === "compensating" && compensation?.queue[0] === step.id) ctx.scheduleAttempt(step, "compensation");
  else return;
  if (wasParked) step.attempts.at(-1)!.afterParking = true;
}

/** A workflow deadline is final: `escalate` cannot apply, so it compensates or fails. */
function timeOutWorkflow(ctx: TransitionContext): void {
  const { state } = ctx;
  state.error = { message: `workflow exceeded timeoutMs (${state.plan.timeoutMs ?? 0} ms)`, timeout: "workflow_timeout" };
  ctx.record({ type: "workflow_timed_out", data: { deadlineAt: state.deadlineAt } });
  if (state.plan.onFailure === "compensate") beginCompensation(ctx, "compensated");
  else failWorkflow(ctx);
}
