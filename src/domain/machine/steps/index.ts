/**
 * The step kinds. Each module says what it means for its kind to start, to fall due and to finish; this one
 * routes a ready step to its kind, after its `when`.
 */
import { stepKind } from "../../plan";
import type { StepState } from "../../state";
import { renderTemplates, TemplateError } from "../../templates";
import type { TransitionContext } from "../context";
import { startAction } from "./action";
import { skipStepAs } from "./outcome";
import { startSleep, wakeSleep } from "./sleep";
import { startWait, timeOutWait } from "./wait-for-event";

export { deliverEvent, deliverInbox, waitingStepFor } from "./wait-for-event";
export { completeStep } from "./outcome";

/** A step whose dependencies are satisfied: skipped when its `when` is falsy, otherwise started as its kind. */
export function startReadyStep(ctx: TransitionContext, step: StepState): void {
  const plan = ctx.plan(step.id);
  if (plan.when !== undefined && !whenHolds(ctx, plan.when)) {
    skipStepAs(ctx, step, "when");
    return;
  }
  startStep(ctx, step);
}

/** Starts a step as its kind, without its `when` (an operator's retry of a failed step starts it again). */
export function startStep(ctx: TransitionContext, step: StepState): void {
  const plan = ctx.plan(step.id);
  switch (stepKind(plan)) {
    case "action":
      startAction(ctx, step);
      return;
    case "sleep":
      if (plan.sleep) startSleep(ctx, step, plan.sleep);
      return;
    case "waitForEvent":
      if (plan.waitForEvent) startWait(ctx, step, plan.waitForEvent);
      return;
  }
}

/** A sleeping or waiting step's timer fell due. */
export function stepTimerDue(ctx: TransitionContext, step: StepState): void {
  const plan = ctx.plan(step.id);
  if (step.status === "sleeping") wakeSleep(ctx, step);
  else if (step.status === "waiting" && plan.waitForEvent) timeOutWait(ctx, step, plan.waitForEvent);
}

/** Falsy (false, null, 0, "", or a path with no value) skips the step, as in the contract. */
function whenHolds(ctx: TransitionContext, when: string): boolean {
  try {
    return Boolean(renderTemplates(when, ctx.templateContext()));
  } catch (error) {
    if (error instanceof TemplateError) return false;
    throw error;
  }
}
