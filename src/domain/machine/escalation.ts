/** Escalation with a deadline: a workflow parked for a human waits `afterMs`, then its default action runs. */
import type { StepState } from "./state";
import type { TransitionContext } from "./context";
import { failWorkflow } from "./failure";
import { retryFailedStep, skipFailedStep } from "./commands/failed-step";
import { giveUp } from "./commands/unwind";

/**
 * Called after every transition: entering `needs_attention` starts the clock (when the definition set one), leaving
 * it stops the clock. A workflow that stays there keeps its first deadline, whatever else happens meanwhile.
 */
export function settleAttentionDeadline(ctx: TransitionContext): void {
  const { state } = ctx;
  if (state.status !== "needs_attention") {
    delete state.attentionDeadline;
    return;
  }
  if (state.attentionDeadline === undefined && state.plan.escalation) state.attentionDeadline = ctx.now + state.plan.escalation.afterMs;
}

/** The steps an operator could act on: the failed compensation at the saga's head, else every failed step. */
function stepsAwaitingOperator(ctx: TransitionContext): StepState[] {
  const { compensation } = ctx.state;
  if (compensation) {
    const head = ctx.step(compensation.queue[0] ?? "");
    return head?.status === "failed" ? [head] : [];
  }
  return ctx.state.steps.filter((step) => step.status === "failed");
}

/** No operator acted before the deadline: the escalation's `then` runs as if an operator had chosen it. */
export function expireEscalation(ctx: TransitionContext, deadlineAt: number): void {
  const { state } = ctx;
  const escalation = state.plan.escalation;
  if (!escalation) return;
  const waiting = stepsAwaitingOperator(ctx);
  const { then, afterMs } = escalation;
  const stepId = waiting[0]?.id;
  ctx.record({ type: "escalation_expired", ...(stepId === undefined ? {} : { stepId }), data: { then, deadlineAt, overdueMs: ctx.now - deadlineAt } });
  // A default that leaves it waiting on people again (a retry that fails at once) starts a new deadline.
  delete state.attentionDeadline;
  const failure = waiting[0]?.error ? `step "${stepId}" failed: ${waiting[0].error.message}; ` : "";
  const reason = `${failure}no operator acted within ${afterMs} ms of the escalation`;
  switch (then) {
    case "compensate":
      giveUp(ctx, reason);
      return;
    case "fail":
      // A saga stopped half way ends failed, not compensated: what it could not undo is named in the error.
      if (state.compensation) state.error = { message: `compensation of step "${stepId}" did not finish: no operator acted within ${afterMs} ms of the escalation` };
      delete state.compensation;
      state.error ??= { message: reason };
      failWorkflow(ctx);
      return;
    case "skip":
      for (const step of waiting) if (step.status === "failed") skipFailedStep(ctx, step, null);
      return;
    case "retry":
      for (const step of waiting) if (step.status === "failed") retryFailedStep(ctx, step);
      return;
  }
}
