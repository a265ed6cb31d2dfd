import { ENDED_STEP_STATUSES } from "../contract";
import { activeAttempt, isTerminal, type Attempt, type StepState } from "./state";
import type { TransitionContext } from "./context";
import { mapItemOf } from "../language/plan";

export type ReportRejection = { ok: false; code: "not_found" | "stale_attempt" | "gone" | "already_claimed" | "reassigned"; message: string };

/**
 * Fencing: only the step's active attempt may change anything. A report for a step that has ended is `gone`;
 * one from any other attempt is stale: refused, and noted in the history without changing the state.
 */
export function locateAttempt(
  ctx: TransitionContext,
  stepId: string,
  n: number,
  report: string,
): { ok: true; step: StepState; attempt: Attempt } | ReportRejection {
  const step = ctx.step(stepId);
  if (!step) {
    // A map's item that ended has left the state for its row: a late report on it is gone, not unknown.
    const item = mapItemOf(stepId);
    if (item && ctx.state.plan.itemSteps?.[item.map]) return { ok: false, code: "gone", message: `item "${stepId}" has ended` };
    return { ok: false, code: "not_found", message: `workflow has no step "${stepId}"` };
  }
  const active = activeAttempt(step);
  if (active && active.n === n) return { ok: true, step, attempt: active };
  if (ENDED_STEP_STATUSES.includes(step.status) || isTerminal(ctx.state.status)) {
    return { ok: false, code: "gone", message: `step "${stepId}" has ended (${step.status})` };
  }
  ctx.note({ type: "stale_report_rejected", stepId, attempt: n, data: { report, currentAttempt: step.attempt } });
  const ended = step.attempts.find((attempt) => attempt.n === n);
  const why = ended && ended.n === step.attempt ? `has ended (${ended.status}${ended.error?.timeout ? `: ${ended.error.timeout}` : ""}); the next attempt is to come` : `is no longer current (current attempt: ${step.attempt})`;
  return { ok: false, code: "stale_attempt", message: `attempt ${n} of step "${stepId}" ${why}` };
}
