import type { StepMachine } from "./step-machine";

/**
 * An action starts as an attempt for an agent: a task message through the queue, then claim, reports and
 * deadlines (claim.ts, reports.ts, deadlines.ts).
 */
export const actionMachine: StepMachine<"action"> = {
  start: (ctx, step) => ctx.scheduleAttempt(step, "action"),
};
