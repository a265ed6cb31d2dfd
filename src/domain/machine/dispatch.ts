import type { TransitionContext } from "./context";
import { advanceCompensation } from "./saga";
import { startReadyStep } from "./steps";
import { settleMaps } from "./map/window";
import { mapItemOf } from "../language/plan";

const SATISFIED = new Set(["succeeded", "skipped"]);

/**
 * Starts every pending step whose dependencies are all satisfied, then completes the workflow if done. A step can
 * finish as it starts (a falsy `when`, a past `until`, an event already in the inbox), so this goes round again
 * until no step became ready. A paused workflow starts nothing.
 */
export function dispatchReadySteps(ctx: TransitionContext): void {
  const { state } = ctx;
  // Maps first, paused or not: their ended items leave, the next ones join as pending steps, a finished map ends.
  if (state.status === "paused") settleMaps(ctx);
  if (state.compensation || (state.status !== "running" && state.status !== "needs_attention")) return;
  let satisfiedAtOnce = true;
  while (satisfiedAtOnce) {
    satisfiedAtOnce = settleMaps(ctx);
    if (state.compensation || (state.status !== "running" && state.status !== "needs_attention")) return;
    const satisfied = new Set(state.steps.filter((s) => SATISFIED.has(s.status)).map((s) => s.id));
    for (const step of state.steps) {
      if (step.status !== "pending") continue;
      if (!ctx.plan(step.id).dependsOn.every((dependency) => satisfied.has(dependency))) continue;
      startReadyStep(ctx, step);
      if (SATISFIED.has(step.status) || mapItemOf(step.id)) satisfiedAtOnce = true;
    }
    if (state.compensation || (state.status !== "running" && state.status !== "needs_attention")) return;
  }
  if (state.steps.every((step) => SATISFIED.has(step.status))) completeWorkflow(ctx);
}

function completeWorkflow(ctx: TransitionContext): void {
  const { state } = ctx;
  state.status = "completed";
  state.output = Object.fromEntries(state.steps.map((step) => [step.id, step.output ?? null]));
  state.endedAt = ctx.now;
  ctx.record({ type: "workflow_completed" });
}

/** After an operator action the workflow waits on people only while some step is still failed. */
export function settleAttentionStatus(ctx: TransitionContext): void {
  const { state } = ctx;
  state.status = state.steps.some((step) => step.status === "failed") ? "needs_attention" : "running";
}

/** After a step changed: the saga moves on while the workflow unwinds, otherwise the ready steps start. */
export function afterStepChange(ctx: TransitionContext): void {
  if (ctx.state.status === "compensating") advanceCompensation(ctx);
  else dispatchReadySteps(ctx);
}
