/**
 * Workflow control: pause, resume, terminate, redrive. Pause is a state of the supervisor, not a flag it polls:
 * while `paused`, `nextDeadlineAt` leaves out the timers that would start or finish work and dispatch starts
 * nothing, so nothing wakes for them; resume runs the supervisor's tick at once, which finds them due.
 */
import { isTerminal, type StepState, type WorkflowStatus } from "../state";
import type { TransitionContext } from "./context";
import { superviseDeadlines } from "./deadlines";
import { dispatchReadySteps } from "./dispatch";
import { failedForGood } from "./failure";
import { conflict, type OperatorResult } from "./operator";
import { fenceUnfinishedSteps } from "./saga";
import { deliverInbox } from "./steps";

/** An operator's result, which can also say the action changed nothing (pausing a paused workflow). */
export type ControlResult = OperatorResult | { ok: true; unchanged: true };

/** Only a running workflow pauses: one that unwinds or waits on an operator is already not moving forward. */
export function pauseWorkflow(ctx: TransitionContext): ControlResult {
  const { state } = ctx;
  if (state.status === "paused") return { ok: true, unchanged: true };
  if (isTerminal(state.status)) return conflict(`workflow has already ended (${state.status})`);
  if (state.status !== "running") return conflict(`only a running workflow can be paused (it is ${state.status})`);
  state.status = "paused";
  state.pausedAt = ctx.now;
  ctx.record({ type: "workflow_paused" });
  return { ok: true };
}

/** Back to running; what fell due while paused happens now, in the order a running workflow would have seen it. */
export function resumeWorkflow(ctx: TransitionContext): ControlResult {
  const { state } = ctx;
  if (state.status !== "paused") return conflict(`only a paused workflow can be resumed (it is ${state.status})`);
  state.status = "running";
  ctx.record({ type: "workflow_resumed", data: { pausedMs: ctx.now - (state.pausedAt ?? ctx.now) } });
  delete state.pausedAt;
  // Events sent while paused were kept: they reach their waits before any wait's timeout is looked at.
  deliverInbox(ctx);
  // A step that failed for good while paused waited for this: its workflow's onFailure applies now.
  const held = state.steps.find((step) => step.status === "failed");
  if (held) failedForGood(ctx, held, held.error ?? { message: "failed while paused" });
  superviseDeadlines(ctx);
  return { ok: true };
}

/** The operator's "stop now": fence what runs, compensate nothing, end `terminated`. */
export function terminateWorkflow(ctx: TransitionContext, reason: string | undefined): ControlResult {
  const { state } = ctx;
  if (isTerminal(state.status)) return conflict(`workflow has already ended (${state.status})`);
  fenceUnfinishedSteps(ctx);
  state.status = "terminated";
  state.endedAt = ctx.now;
  state.error = { message: reason ?? "terminated by an operator" };
  ctx.record({ type: "workflow_terminated", data: reason === undefined ? {} : { reason } });
  return { ok: true };
}

const REDRIVABLE: ReadonlySet<WorkflowStatus> = new Set(["failed", "cancelled", "terminated"]);
const KEPT = new Set(["succeeded", "skipped"]);

/**
 * Runs an ended workflow again from where it stopped, as Step Functions' redrive: steps that did not succeed
 * (and with `fromStep`, that step and everything downstream) start over with fresh budgets; outputs of the
 * others are kept. Attempt numbers run on, so a report from before the redrive is still stale.
 */
export function redriveWorkflow(ctx: TransitionContext, fromStep: string | undefined): ControlResult {
  const { state } = ctx;
  if (!REDRIVABLE.has(state.status)) {
    return conflict(`only a failed, cancelled or terminated workflow can be redriven (it is ${state.status})`);
  }
  if (fromStep !== undefined && !ctx.step(fromStep)) return { ok: false, code: "not_found", message: `workflow has no step "${fromStep}"` };
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
  ctx.record({ type: "workflow_redriven", data: { ...(fromStep === undefined ? {} : { fromStep }), steps: reset, redriveCount } });
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
