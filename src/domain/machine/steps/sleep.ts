/** A `sleep` step: a timer the supervisor (the object's alarm) owns. No queue message, no agent, no polling. */
import { MAX_TIMER_MS } from "../../language/primitives";
import type { StepState } from "../state";
import type { Sleep } from "../../language/steps";
import { renderTemplates, TemplateError } from "../../language/templates";
import { parseWakeTime } from "../../language/wake-time";
import type { TransitionContext } from "../context";
import { failStepOutright } from "../failure";
import { completeStep } from "./outcome";
import type { StepMachine } from "./step-machine";

export const sleepMachine: StepMachine<"sleep"> = {
  start: (ctx, step, plan) => startSleep(ctx, step, plan.sleep),
  timerDue: (ctx, step) => {
    if (step.status === "sleeping") wakeSleep(ctx, step);
  },
};

function startSleep(ctx: TransitionContext, step: StepState, sleep: Sleep): void {
  const until = wakeTime(ctx, step.id, sleep);
  if (typeof until === "string") {
    failStepOutright(ctx, step, { message: until, retryable: false });
    return;
  }
  step.status = "sleeping";
  step.timerAt = until;
  step.waitingSince = ctx.now;
  ctx.record({ type: "step_sleeping", stepId: step.id, data: { until } });
  // A time already past (as in Temporal, a sleep of nothing) returns at once.
  if (until <= ctx.now) wakeSleep(ctx, step);
}

/** The timer fell due: the step succeeds with the time it slept until. */
function wakeSleep(ctx: TransitionContext, step: StepState): void {
  completeStep(ctx, step, { sleptUntil: step.timerAt ?? ctx.now });
}

/** When the sleep ends, or why it cannot: `until` is templated now, as it reads upstream outputs. */
function wakeTime(ctx: TransitionContext, stepId: string, sleep: Sleep): number | string {
  if (sleep.durationMs !== undefined) return ctx.now + sleep.durationMs;
  let rendered: unknown;
  try {
    rendered = renderTemplates(sleep.until, ctx.templateContext(stepId));
  } catch (error) {
    if (error instanceof TemplateError) return `sleep.until: ${error.message}`;
    throw error;
  }
  const at = parseWakeTime(rendered);
  if (at === undefined) return `sleep.until must be epoch milliseconds or an ISO 8601 date-time (got ${JSON.stringify(rendered)?.slice(0, 80)})`;
  if (at > ctx.now + MAX_TIMER_MS) return `sleep.until is more than 365 days ahead (${new Date(at).toISOString()})`;
  return at;
}
