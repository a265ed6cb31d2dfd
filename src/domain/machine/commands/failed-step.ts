/** The step commands: retry or skip a failed step (or, during compensation, the compensation that failed). */
import { actedBy, allowsStep, allowsWorkflow, type ActedBy, type CommandReply } from "../../language/operator-commands";
import type { StepState } from "../state";
import type { TransitionContext } from "../context";
import { dispatchReadySteps, settleAttentionStatus } from "../dispatch";
import { advanceCompensation } from "../saga";
import { startStep } from "../steps";
import { conflict, noSuchStep, type Refusal } from "./refusal";

/** The step operators may act on: a failed step, or during compensation the one whose compensation failed. */
function failedStep(ctx: TransitionContext, command: "retryStep" | "skipStep", stepId: string): { step: StepState } | Refusal {
  const { state } = ctx;
  if (!allowsWorkflow(command, state.status)) {
    return conflict(`operator actions need a workflow in needs_attention (it is ${state.status})`);
  }
  const step = ctx.step(stepId);
  if (!step) return noSuchStep(stepId);
  if (!allowsStep(command, step.status)) return conflict(`step "${stepId}" has not failed (it is ${step.status})`);
  if (state.compensation && state.compensation.queue[0] !== stepId) {
    return conflict(`step "${stepId}" is not the compensation waiting on an operator`);
  }
  return { step };
}

/** A fresh attempt budget for a failed step (or its failed compensation). */
export function retryStep(ctx: TransitionContext, stepId: string, by: ActedBy): CommandReply {
  const found = failedStep(ctx, "retryStep", stepId);
  if (!("step" in found)) return found;
  ctx.record({ type: "operator_action", stepId, data: { action: "retry_step", ...actedBy(by) } });
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
export function skipStep(ctx: TransitionContext, stepId: string, output: unknown, by: ActedBy): CommandReply {
  const found = failedStep(ctx, "skipStep", stepId);
  if (!("step" in found)) return found;
  ctx.record({ type: "operator_action", stepId, data: { action: "skip_step", ...actedBy(by) } });
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
