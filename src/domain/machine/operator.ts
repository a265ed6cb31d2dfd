import { isTerminal, type StepState } from "../state";
import type { TransitionContext } from "./context";
import { dispatchReadySteps, settleAttentionStatus } from "./dispatch";
import { advanceCompensation, beginCompensation } from "./saga";
import { startStep } from "./steps";

export type OperatorResult = { ok: true } | { ok: false; code: "conflict" | "not_found"; message: string };

export function conflict(message: string): { ok: false; code: "conflict"; message: string } {
  return { ok: false, code: "conflict", message };
}

/** Cancel fences running attempts, compensates what succeeded, then ends `cancelled`. Repeating it is harmless. */
export function cancelWorkflow(ctx: TransitionContext): OperatorResult {
  const { state } = ctx;
  if (isTerminal(state.status)) return conflict(`workflow has already ended (${state.status})`);
  if (state.compensation?.endStatus === "cancelled") return { ok: true };
  if (state.compensation) return conflict("workflow is already compensating after a failure");
  ctx.record({ type: "operator_action", data: { action: "cancel" } });
  beginCompensation(ctx, "cancelled");
  return { ok: true };
}

/** The step operators may act on: a failed step, or during compensation the one whose compensation failed. */
function failedStep(ctx: TransitionContext, stepId: string): { step: StepState } | OperatorResult {
  const { state } = ctx;
  if (state.status !== "needs_attention") {
    return conflict(`operator actions need a workflow in needs_attention (it is ${state.status})`);
  }
  const step = ctx.step(stepId);
  if (!step) return { ok: false, code: "not_found", message: `workflow has no step "${stepId}"` };
  if (step.status !== "failed") return conflict(`step "${stepId}" has not failed (it is ${step.status})`);
  if (state.compensation && state.compensation.queue[0] !== stepId) {
    return conflict(`step "${stepId}" is not the compensation waiting on an operator`);
  }
  return { step };
}

/** A fresh attempt budget for a failed step (or its failed compensation). */
export function retryStep(ctx: TransitionContext, stepId: string): OperatorResult {
  const found = failedStep(ctx, stepId);
  if (!("step" in found)) return found;
  ctx.record({ type: "operator_action", stepId, data: { action: "retry_step" } });
  retryFailedStep(ctx, found.step);
  return { ok: true };
}

/** Retries a failed step, for an operator or for an escalation whose deadline passed. */
export function retryFailedStep(ctx: TransitionContext, step: StepState): void {
  step.budgetUsed = 0;
  delete step.error;
  if (ctx.state.compensation) {
    ctx.state.status = "compensating";
    ctx.scheduleAttempt(step, "compensation");
    return;
  }
  startStep(ctx, step);
  settleAttentionStatus(ctx);
  dispatchReadySteps(ctx);
}

/** Treats a failed step as succeeded with the given output (or its compensation as done). */
export function skipStep(ctx: TransitionContext, stepId: string, output: unknown): OperatorResult {
  const found = failedStep(ctx, stepId);
  if (!("step" in found)) return found;
  ctx.record({ type: "operator_action", stepId, data: { action: "skip_step" } });
  skipFailedStep(ctx, found.step, output);
  return { ok: true };
}

/** Treats a failed step as succeeded, for an operator or for an escalation whose deadline passed. */
export function skipFailedStep(ctx: TransitionContext, step: StepState, output: unknown): void {
  step.status = "skipped";
  delete step.error;
  if (ctx.state.compensation) {
    ctx.state.status = "compensating";
    advanceCompensation(ctx);
    return;
  }
  step.output = output ?? null;
  settleAttentionStatus(ctx);
  dispatchReadySteps(ctx);
}

/** Gives up on a workflow that waits on an operator: unwind it (or carry on unwinding it). */
export function compensateWorkflow(ctx: TransitionContext): OperatorResult {
  const { state } = ctx;
  if (state.status !== "needs_attention") {
    return conflict(`operator actions need a workflow in needs_attention (it is ${state.status})`);
  }
  ctx.record({ type: "operator_action", data: { action: "compensate" } });
  giveUp(ctx, "compensated by an operator");
  return { ok: true };
}

/** Unwinds a workflow that waits on people (or carries on unwinding it), for an operator or an expired escalation. */
export function giveUp(ctx: TransitionContext, reason: string): void {
  const { state } = ctx;
  const head = state.compensation && ctx.step(state.compensation.queue[0] ?? "");
  if (head) {
    state.status = "compensating";
    head.budgetUsed = 0;
    ctx.scheduleAttempt(head, "compensation");
    return;
  }
  state.error ??= { message: reason };
  beginCompensation(ctx, "compensated");
}
