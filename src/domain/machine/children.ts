/**
 * A `workflow` step's child, as its parent hears of it: the start recorded (or refused), the end applied exactly
 * once (fenced by the step's current child id, so a notice delivered twice, or one for a child an earlier attempt
 * started, changes nothing), and a child left open by a parent that fenced its step closed as `onParentClose` says.
 */
import { retryDelayMs } from "../language/retry-policy";
import { mapItemOf, type StepPlanOf } from "../language/plan";
import { isTerminal, type StepError, type WorkflowState, type WorkflowStatus } from "./state";
import type { TransitionContext } from "./context";
import type { ChildEndNotice, NotifyParent } from "./effects";
import { afterStepChange } from "./dispatch";
import { failStepOutright } from "./failure";
import { completeStep } from "./steps";
import { childIsOpen, type ChildStep } from "./steps/workflow";

/** What the parent's object is told of its children, as events. */
export type ChildWorkflowEvent =
  /** The start path made the child, or found it made by this step before (`created: false`). */
  | { type: "ChildWorkflowStarted"; stepId: string; childId: string; created: boolean }
  /** The start path refused it: no such definition, a definition refused, or its id taken by another workflow. */
  | { type: "ChildWorkflowRefused"; stepId: string; childId: string; error: StepError }
  /** The child's object says it ended. */
  | ({ type: "ChildWorkflowEnded" } & ChildEndNotice);

/** `applied: false`: the step no longer waits on that child (a duplicate, or a child of an earlier attempt). */
export type ChildReply = { ok: true; applied: boolean };

export function applyChildEvent(ctx: TransitionContext, event: ChildWorkflowEvent): ChildReply {
  const step = waitingOn(ctx, event.stepId, event.childId);
  if (!step) return event.type === "ChildWorkflowEnded" ? noteClosedChildEnd(ctx, event) : { ok: true, applied: false };
  switch (event.type) {
    case "ChildWorkflowStarted":
      if (step.child.status !== "starting") return { ok: true, applied: false };
      step.child.status = "running";
      ctx.record({ type: "child_workflow_started", stepId: step.id, attempt: step.attempt, data: { childId: event.childId, created: event.created } });
      return { ok: true, applied: true };
    case "ChildWorkflowRefused":
      failStepOutright(ctx, step, { ...event.error, retryable: false });
      break;
    case "ChildWorkflowEnded":
      endStep(ctx, step, event);
      break;
  }
  afterStepChange(ctx);
  return { ok: true, applied: true };
}

/**
 * The end of a child its parent no longer waited on (the parent closed it, or ended): the step's view says how the
 * child ended, and nothing else moves.
 */
function noteClosedChildEnd(ctx: TransitionContext, notice: ChildEndNotice): ChildReply {
  const step = ctx.step(notice.stepId);
  if (step?.kind !== "workflow" || step.status !== "cancelled" || step.child?.id !== notice.childId || !childIsOpen(step.child)) return { ok: true, applied: false };
  step.child.status = notice.status;
  ctx.record({ type: "child_workflow_ended", stepId: step.id, attempt: step.attempt, data: { childId: notice.childId, status: notice.status } });
  return { ok: true, applied: true };
}

/** The step, if it still waits on this child. */
function waitingOn(ctx: TransitionContext, stepId: string, childId: string): (ChildStep & { child: NonNullable<ChildStep["child"]> }) | undefined {
  const step = ctx.step(stepId);
  if (step?.kind !== "workflow" || step.status !== "waiting" || step.child?.id !== childId || !childIsOpen(step.child)) return undefined;
  return step as ChildStep & { child: NonNullable<ChildStep["child"]> };
}

/** Completed: the step succeeds with the child's output. Any other end: the step fails with the child's error. */
function endStep(ctx: TransitionContext, step: ChildStep & { child: NonNullable<ChildStep["child"]> }, notice: ChildEndNotice): void {
  step.child.status = notice.status;
  ctx.record({ type: "child_workflow_ended", stepId: step.id, attempt: step.attempt, data: { childId: notice.childId, status: notice.status } });
  if (notice.status === "completed") {
    completeStep(ctx, step, notice.output ?? null, step.attempt);
    return;
  }
  const reason = notice.error?.message ?? "no error recorded";
  childFailed(ctx, step, { message: `child workflow "${notice.childId}" ended ${notice.status}: ${reason}` });
}

/**
 * A child that did not complete fails the step for good, unless the step has a `retry` of its own with attempts
 * left: then, after its backoff, the step starts a fresh child (`<id>:<attempt>`).
 */
function childFailed(ctx: TransitionContext, step: ChildStep, error: StepError): void {
  const plan = ctx.plan(step.id) as StepPlanOf<"workflow">;
  if (!plan.retriesChild || step.budgetUsed >= plan.retry.maxAttempts || ctx.state.status === "compensating") {
    failStepOutright(ctx, step, { ...error, retryable: false });
    return;
  }
  const delayMs = retryDelayMs(plan.retry, step.budgetUsed, ctx.random);
  const fields = { stepId: step.id, attempt: step.attempt };
  step.status = "retrying";
  step.error = error;
  step.nextRetryAt = ctx.now + delayMs;
  delete step.waitingSince;
  ctx.record({ type: "step_failed", ...fields, data: { kind: "workflow", error, final: false } });
  ctx.record({ type: "step_retry_scheduled", ...fields, data: { kind: "workflow", delayMs, nextRetryAt: step.nextRetryAt } });
}

/**
 * After any transition: each step it fenced (a cancel, terminate, failure or timeout of the parent) whose child was
 * still open has that child closed. A terminated parent terminates it, any other close does what the step's
 * `onParentClose` says (cancel by default); `abandon` leaves it running, and is recorded all the same.
 */
export function closeChildrenOfFencedSteps(ctx: TransitionContext, before: WorkflowState): void {
  for (const earlier of before.steps) {
    if (earlier.kind !== "workflow" || earlier.status !== "waiting" || !wasFenced(ctx, earlier.id)) continue;
    const step = (ctx.step(earlier.id) ?? earlier) as ChildStep;
    if (!childIsOpen(step.child)) continue;
    const policy = (ctx.plan(step.id) as StepPlanOf<"workflow">).workflow.onParentClose ?? "cancel";
    const action = policy === "abandon" ? policy : ctx.state.status === "terminated" ? "terminate" : policy;
    const childId = step.child.id;
    ctx.record({ type: "child_workflow_closed", stepId: step.id, attempt: step.attempt, data: { childId, action } });
    if (action !== "abandon") ctx.childEffects.push({ type: "CloseChildWorkflow", stepId: step.id, childId, action });
  }
}

/**
 * Whether this transition fenced the step: it is `cancelled`, or, for a map's item, it left the state as a
 * `cancelled` row (its map stopped its items in flight).
 */
function wasFenced(ctx: TransitionContext, stepId: string): boolean {
  const step = ctx.step(stepId);
  if (step) return step.status === "cancelled";
  const item = mapItemOf(stepId);
  return item !== undefined && ctx.items.get(item.map, item.index)?.status === "cancelled";
}

/** A child that just ended tells its parent, with its output or its error (see ParentNoticeDelivery). */
export function parentNotice(previous: WorkflowState | undefined, state: WorkflowState): NotifyParent | undefined {
  const { parent } = state;
  if (!parent || !isTerminal(state.status) || (previous && isTerminal(previous.status))) return undefined;
  const status: WorkflowStatus = state.status;
  return {
    type: "NotifyParent",
    notice: {
      parentId: parent.id,
      stepId: parent.stepId,
      attempt: parent.attempt,
      childId: state.id,
      status,
      ...(state.output === undefined ? {} : { output: state.output }),
      ...(state.error === undefined ? {} : { error: state.error }),
    },
  };
}
