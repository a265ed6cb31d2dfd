import type { QueueLagSample } from "../back-pressure";
import type { Timeouts } from "../retry-policy";
import { activeAttempt, isTerminal, type Attempt, type WorkflowState } from "../state";
import type { TransitionContext } from "./context";
import { failAttempt, failWorkflow } from "./failure";
import { beginCompensation } from "./saga";
import { checkQueuedAttempt, queueCheckAt } from "./queued-attempts";
import { afterStepChange } from "./dispatch";

type TimeoutKind = "schedule_to_start" | "start_to_close" | "heartbeat";
type DeadlineKind = TimeoutKind | "queue_check";

/**
 * When an active attempt needs the supervisor next, and why. A queued attempt has no deadline of its own unless
 * its step sets `scheduleToStartMs` (waiting in our queue is not the attempt failing); the supervisor only
 * checks now and then that its message was not lost.
 */
function attemptDeadline(attempt: Attempt, timeouts: Timeouts): { at: number; kind: DeadlineKind } {
  if (attempt.status === "scheduled") {
    const check = { at: queueCheckAt(attempt), kind: "queue_check" as const };
    if (timeouts.scheduleToStartMs === undefined) return check;
    const timeout = { at: attempt.scheduledAt + timeouts.scheduleToStartMs, kind: "schedule_to_start" as const };
    return timeout.at <= check.at ? timeout : check;
  }
  const startedAt = attempt.startedAt ?? attempt.scheduledAt;
  const close = startedAt + timeouts.startToCloseMs;
  const heartbeat = (attempt.lastHeartbeatAt ?? startedAt) + timeouts.heartbeatMs;
  return heartbeat < close ? { at: heartbeat, kind: "heartbeat" } : { at: close, kind: "start_to_close" };
}

/** The earliest moment the supervisor must act, or undefined when nothing is pending (terminal, or waiting on people). */
export function nextDeadlineAt(state: WorkflowState): number | undefined {
  if (isTerminal(state.status)) return undefined;
  const candidates: number[] = [];
  if (state.deadlineAt !== undefined && !state.compensation) candidates.push(state.deadlineAt);
  for (const step of state.steps) {
    const attempt = activeAttempt(step);
    if (attempt) {
      const plan = state.plan.steps.find((s) => s.id === step.id);
      if (plan) candidates.push(attemptDeadline(attempt, plan.timeouts).at);
    } else if (step.nextRetryAt !== undefined) {
      candidates.push(step.nextRetryAt);
    }
  }
  return candidates.length === 0 ? undefined : Math.min(...candidates);
}

/**
 * The supervisor's tick: time out overdue attempts, then start retries whose backoff has passed, then the
 * whole-workflow deadline. Safe to run at any time and any number of times: it only acts on what is due.
 */
export function superviseDeadlines(ctx: TransitionContext, queueLag?: QueueLagSample): void {
  const { state, now } = ctx;
  if (isTerminal(state.status)) return;
  if (state.deadlineAt !== undefined && now >= state.deadlineAt && !state.compensation) {
    timeOutWorkflow(ctx);
    if (isTerminal(state.status)) return;
  }
  for (const step of state.steps) {
    const attempt = activeAttempt(step);
    if (!attempt) continue;
    const deadline = attemptDeadline(attempt, ctx.plan(step.id).timeouts);
    if (deadline.at > now) continue;
    if (deadline.kind === "queue_check") {
      checkQueuedAttempt(ctx, step, attempt, queueLag);
      continue;
    }
    const overdueMs = now - deadline.at;
    const type = deadline.kind === "heartbeat" ? "step_heartbeat_missed" : "step_timed_out";
    ctx.record({ type, stepId: step.id, attempt: attempt.n, data: { timeout: deadline.kind, deadlineAt: deadline.at, overdueMs } });
    const message =
      deadline.kind === "heartbeat" ? "no heartbeat within heartbeatMs" : `attempt exceeded ${deadline.kind === "start_to_close" ? "startToCloseMs" : "scheduleToStartMs"}`;
    failAttempt(ctx, step, attempt, { message, retryable: true, timeout: deadline.kind }, { timedOut: true });
  }
  for (const step of state.steps) {
    if (step.nextRetryAt === undefined || step.nextRetryAt > now || activeAttempt(step)) continue;
    if (step.status === "retrying" && !state.compensation) ctx.scheduleAttempt(step, "action");
    else if (step.status === "compensating" && state.compensation?.queue[0] === step.id) {
      ctx.scheduleAttempt(step, "compensation");
    }
  }
  afterStepChange(ctx);
}

/** A workflow deadline is final: `escalate` cannot apply, so it compensates or fails. */
function timeOutWorkflow(ctx: TransitionContext): void {
  const { state } = ctx;
  state.error = { message: `workflow exceeded timeoutMs (${state.plan.timeoutMs ?? 0} ms)`, timeout: "workflow_timeout" };
  ctx.record({ type: "workflow_timed_out", data: { deadlineAt: state.deadlineAt } });
  if (state.plan.onFailure === "compensate") beginCompensation(ctx, "compensated");
  else failWorkflow(ctx);
}
