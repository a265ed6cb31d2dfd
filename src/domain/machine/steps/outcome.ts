import type { StepState } from "../state";
import type { TransitionContext } from "../context";
import { mapItemOf } from "../../language/plan";

/** A step's work is done: its output is kept for templates and compensation may later undo it. */
export function completeStep(ctx: TransitionContext, step: StepState, output: unknown, attempt?: number): void {
  step.status = "succeeded";
  step.output = output ?? null;
  delete step.error;
  delete step.timerAt;
  delete step.waitingSince;
  // A map's item is undone through its map, newest item first (map/undo.ts).
  if (!mapItemOf(step.id)) ctx.state.completionOrder.push(step.id);
  ctx.record({ type: "step_succeeded", stepId: step.id, ...(attempt === undefined ? {} : { attempt }) });
}

/** Skipped by its `when` or by a wait's `onTimeout: "skip"`: output null, and its dependents go on. */
export function skipStepAs(ctx: TransitionContext, step: StepState, reason: "when" | "wait_timed_out"): void {
  step.status = "skipped";
  step.output = null;
  delete step.timerAt;
  delete step.waitingSince;
  ctx.record({ type: "step_skipped", stepId: step.id, data: { reason } });
}
