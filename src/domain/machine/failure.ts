import { retryDelayMs } from "../language/retry-policy";
import type { Attempt, StepError, StepState } from "./state";
import type { TransitionContext } from "./context";
import { mapItemOf } from "../language/plan";
import { beginCompensation, fenceUnfinishedSteps } from "./saga";
import { withdrawUnclaimed } from "./pool-offers";

/**
 * Ends an attempt that did not succeed. A retryable failure with budget left waits out its backoff;
 * otherwise the step has failed for good and the workflow's `onFailure` decides what happens next.
 */
export function failAttempt(
  ctx: TransitionContext,
  step: StepState,
  attempt: Attempt,
  error: StepError,
  outcome: { timedOut?: boolean; retryAfterMs?: number } = {},
): void {
  attempt.status = outcome.timedOut ? "timed_out" : "failed";
  attempt.endedAt = ctx.now;
  attempt.error = error;
  step.error = error;
  withdrawUnclaimed(ctx, step.id, attempt);
  const policy = ctx.plan(step.id).retry;
  const mayRetry = error.retryable !== false && step.budgetUsed < policy.maxAttempts;
  const final = !mayRetry || (attempt.kind === "action" && ctx.state.status === "compensating");
  const fields = { stepId: step.id, attempt: attempt.n };
  const failed = { type: "step_failed", ...fields, data: { kind: attempt.kind, error, final } } as const;
  if (!outcome.timedOut) ctx.record(failed);

  if (!final) {
    const delayMs = retryDelayMs(policy, step.budgetUsed, ctx.random, outcome.retryAfterMs);
    step.nextRetryAt = ctx.now + delayMs;
    if (attempt.kind === "action") step.status = "retrying";
    ctx.record({ type: "step_retry_scheduled", ...fields, data: { kind: attempt.kind, delayMs, nextRetryAt: step.nextRetryAt } });
    return;
  }
  step.status = "failed";
  delete step.nextRetryAt;
  if (outcome.timedOut) ctx.record(failed);
  if (attempt.kind === "compensation") {
    ctx.state.status = "needs_attention";
    ctx.record({ type: "workflow_escalated", stepId: step.id, data: { phase: "compensation", error } });
    return;
  }
  settleFailedStep(ctx, step, error);
}

/** A step with no attempts (a wait that timed out, a sleep whose time is no time) fails for good at once. */
export function failStepOutright(ctx: TransitionContext, step: StepState, error: StepError): void {
  step.status = "failed";
  step.error = error;
  delete step.timerAt;
  delete step.waitingSince;
  ctx.record({ type: "step_failed", stepId: step.id, data: { kind: ctx.plan(step.id).kind, error, final: true } });
  settleFailedStep(ctx, step, error);
}

/**
 * A step failed for good: the workflow's `onFailure` decides what happens next. A paused workflow makes no
 * decisions: the step stays failed and `resume` applies `onFailure` then.
 */
function settleFailedStep(ctx: TransitionContext, step: StepState, error: StepError): void {
  // A map's item that failed is its map's to count against its tolerance (map/window.ts), not the workflow's.
  if (ctx.state.status !== "paused" && !mapItemOf(step.id)) failedForGood(ctx, step, error);
}

export function failedForGood(ctx: TransitionContext, step: StepState, error: StepError): void {
  const { state } = ctx;
  const workflowError: StepError = { message: `step "${step.id}" failed: ${error.message}` };
  switch (state.plan.onFailure) {
    case "escalate":
      state.status = "needs_attention";
      ctx.record({ type: "workflow_escalated", stepId: step.id, data: { phase: "action", error } });
      return;
    case "fail":
      state.error = workflowError;
      failWorkflow(ctx);
      return;
    case "compensate":
      state.error = workflowError;
      beginCompensation(ctx, "compensated");
      return;
  }
}

export function failWorkflow(ctx: TransitionContext): void {
  fenceUnfinishedSteps(ctx);
  ctx.state.status = "failed";
  ctx.state.endedAt = ctx.now;
  ctx.record({ type: "workflow_failed", data: { error: ctx.state.error } });
}
