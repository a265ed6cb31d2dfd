/**
 * The step kinds' machines, by kind. Each module says what it means for its kind to start and for its timer to
 * fall due; this one routes a ready step to its kind, after its `when`.
 */
import type { StepPlan } from "../../language/plan";
import type { StepState } from "../state";
import type { StepKindName } from "../../language/steps";
import { renderTemplates, TemplateError } from "../../language/templates";
import type { TransitionContext } from "../context";
import { actionMachine } from "./action";
import { mapMachine } from "./map";
import { skipStepAs } from "./outcome";
import { sleepMachine } from "./sleep";
import type { StepMachine } from "./step-machine";
import { waitForEventMachine } from "./wait-for-event";
import { workflowMachine } from "./workflow";

/** One machine for every kind in steps/: a kind registered there without one here does not compile. */
const STEP_MACHINES: { [K in StepKindName]: StepMachine<K> } = {
  action: actionMachine,
  sleep: sleepMachine,
  waitForEvent: waitForEventMachine,
  map: mapMachine,
  workflow: workflowMachine,
};

/** Any kind's machine, taking the plan of the step at hand (whose kind is the machine's, as it is looked up by it). */
interface AnyStepMachine {
  start(ctx: TransitionContext, step: StepState, plan: StepPlan): void;
  timerDue?(ctx: TransitionContext, step: StepState, plan: StepPlan): void;
}

function machineOf(plan: StepPlan): AnyStepMachine {
  return STEP_MACHINES[plan.kind] as AnyStepMachine;
}

export { deliverEvent, deliverInbox, waitingStepFor } from "./wait-for-event";
export { completeStep } from "./outcome";

/** A step whose dependencies are satisfied: skipped when its `when` is falsy, otherwise started as its kind. */
export function startReadyStep(ctx: TransitionContext, step: StepState): void {
  const plan = ctx.plan(step.id);
  if (plan.when !== undefined && !whenHolds(ctx, step.id, plan.when)) {
    skipStepAs(ctx, step, "when");
    return;
  }
  startStep(ctx, step);
}

/** Starts a step as its kind, without its `when` (an operator's retry of a failed step starts it again). */
export function startStep(ctx: TransitionContext, step: StepState): void {
  const plan = ctx.plan(step.id);
  machineOf(plan).start(ctx, step, plan);
}

/** A step's own timer fell due (a sleep's end, a wait's timeout): its kind says what that means. */
export function stepTimerDue(ctx: TransitionContext, step: StepState): void {
  const plan = ctx.plan(step.id);
  machineOf(plan).timerDue?.(ctx, step, plan);
}

/** Falsy (false, null, 0, "", or a path with no value) skips the step, as in the contract. */
function whenHolds(ctx: TransitionContext, stepId: string, when: string): boolean {
  try {
    return Boolean(renderTemplates(when, ctx.templateContext(stepId)));
  } catch (error) {
    if (error instanceof TemplateError) return false;
    throw error;
  }
}
