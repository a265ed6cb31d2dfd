import { actedBy, allowsWorkflow, type ActedBy, type CommandReply } from "../../language/operator-commands";
import type { StepState } from "../state";
import type { TransitionContext } from "../context";
import { dispatchReadySteps } from "../dispatch";
import { conflict, noSuchStep } from "./refusal";

const KEPT = new Set(["succeeded", "skipped"]);

/**
 * Runs an ended workflow again from where it stopped, as Step Functions' redrive: steps that did not succeed
 * (and with `fromStep`, that step and everything downstream) start over with fresh budgets; outputs of the
 * others are kept. Attempt numbers run on, so a report from before the redrive is still stale.
 */
export function redriveWorkflow(ctx: TransitionContext, fromStep: string | undefined, by: ActedBy): CommandReply {
  const { state } = ctx;
  if (!allowsWorkflow("redrive", state.status)) {
    return conflict(`only a failed, cancelled or terminated workflow can be redriven (it is ${state.status})`);
  }
  if (fromStep !== undefined && !ctx.step(fromStep)) return noSuchStep(fromStep);
  const rerun = fromStep === undefined ? new Set<string>() : downstreamOf(ctx, fromStep);
  const redriveCount = (state.redriveCount ?? 0) + 1;
  const reset: string[] = [];
  for (const step of state.steps) {
    if (!rerun.has(step.id) && KEPT.has(step.status)) continue;
    resetStep(step, rerun.has(step.id), redriveCount);
    reset.push(step.id);
  }
  state.redriveCount = redriveCount;
  state.completionOrder = state.completionOrder.filter((id) => !reset.includes(id));
  state.status = "running";
  delete state.error;
  delete state.endedAt;
  delete state.output;
  delete state.compensation;
  if (state.plan.timeoutMs === undefined) delete state.deadlineAt;
  else state.deadlineAt = ctx.now + state.plan.timeoutMs;
  ctx.record({ type: "workflow_redriven", data: { ...(fromStep === undefined ? {} : { fromStep }), steps: reset, redriveCount, ...actedBy(by) } });
  dispatchReadySteps(ctx);
  return { ok: true };
}

/**
 * A step about to run again. It keeps its Idempotency-Key, so an effect that already happened at the remote does
 * not happen twice, unless that effect was undone (compensated) or the operator asked for it again (`fromStep`
 * on a succeeded step): then the remote must do the work anew, under a key of this redrive's own.
 */
function resetStep(step: StepState, rerun: boolean, redriveCount: number): void {
  // Its status, not its history: a step undone in an earlier round and re-run since has a live effect again.
  const undone = step.status === "compensated";
  if (undone || (rerun && step.status === "succeeded")) step.keyRound = redriveCount;
  step.status = "pending";
  step.budgetUsed = 0;
  // A map re-run on purpose runs all its items again; otherwise only those that did not succeed (map/window.ts).
  if (rerun && step.kind === "map") delete step.items;
  for (const field of ["output", "error", "nextRetryAt", "timerAt", "waitingSince", "parked"] as const) delete step[field];
}

/** The step and every step that depends on it, directly or not. */
function downstreamOf(ctx: TransitionContext, stepId: string): Set<string> {
  const found = new Set([stepId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const plan of ctx.state.plan.steps) {
      if (found.has(plan.id) || !plan.dependsOn.some((dependency) => found.has(dependency))) continue;
      found.add(plan.id);
      grew = true;
    }
  }
  return found;
}
