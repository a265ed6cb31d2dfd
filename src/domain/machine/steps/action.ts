import type { StepState } from "../../state";
import type { TransitionContext } from "../context";

/**
 * An `http` action starts as an attempt for an agent: a task message through the queue, then claim, reports and
 * deadlines (claim.ts, reports.ts, deadlines.ts).
 */
export function startAction(ctx: TransitionContext, step: StepState): void {
  ctx.scheduleAttempt(step, "action");
}
