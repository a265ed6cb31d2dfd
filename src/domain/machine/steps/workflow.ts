/**
 * A `workflow` step: its start asks for the child's start (an effect, written to the outbox in the same
 * transaction as the step's new state, so it is durable before anything acts on it) and waits. What the child's
 * start and end do to the step is in children.ts, as they arrive as events.
 */
import { ID_PATTERN } from "../../contract";
import { mapItemOf, type StepPlanOf } from "../../language/plan";
import { MAX_WORKFLOW_DEPTH, type ChildRef, type ChildWorkflow } from "../../language/steps";
import { renderTemplates, TemplateError } from "../../language/templates";
import type { TransitionContext } from "../context";
import type { ChildStart } from "../effects";
import { failStepOutright } from "../failure";
import type { StepState } from "../state";
import type { StepMachine } from "./step-machine";

/** A step of this kind, with the child it keeps. */
export type ChildStep = Extract<StepState, { kind: "workflow" }>;

export const workflowMachine: StepMachine<"workflow"> = {
  start: (ctx, step, plan) => startChild(ctx, step as ChildStep, plan),
};

/**
 * The child's id when the step names none: one per (parent, step), and for a map's item one per (parent, map,
 * index), so a start delivered twice, or an event that starts the step twice, finds the same child.
 */
export function defaultChildId(parentId: string, stepId: string): string {
  const item = mapItemOf(stepId);
  return item ? `${parentId}:${item.map}:${item.index}` : `${parentId}:${stepId}`;
}

/** A retry starts a fresh child: the first attempt keeps the id, attempt n adds `:<n>`. */
export function childIdOf(base: string, attempt: number): string {
  return attempt <= 1 ? base : `${base}:${attempt}`;
}

/** Whether the parent still waits on this child: its end has not been heard. */
export function childIsOpen(child: ChildRef | undefined): child is ChildRef {
  return child !== undefined && (child.status === "starting" || child.status === "running");
}

function startChild(ctx: TransitionContext, step: ChildStep, plan: StepPlanOf<"workflow">): void {
  step.attempt += 1;
  step.budgetUsed += 1;
  delete step.nextRetryAt;
  delete step.child;
  const depth = (ctx.state.parent?.depth ?? 0) + 1;
  const start = depth > MAX_WORKFLOW_DEPTH ? `child workflows nest at most ${MAX_WORKFLOW_DEPTH} deep (this one would be at depth ${depth})` : childStartOf(ctx, step, plan.workflow);
  if (typeof start === "string") {
    failStepOutright(ctx, step, { message: start, retryable: false });
    return;
  }
  step.status = "waiting";
  step.waitingSince = ctx.now;
  step.child = { id: start.id, status: "starting" };
  ctx.record({ type: "step_waiting_for_child", stepId: step.id, attempt: step.attempt, data: { childId: start.id, depth } });
  ctx.childEffects.push({ type: "StartChildWorkflow", stepId: step.id, attempt: step.attempt, start, depth });
}

/** The child's start body, its id and input rendered now (they read upstream outputs), or why it cannot start. */
function childStartOf(ctx: TransitionContext, step: ChildStep, child: ChildWorkflow): ChildStart | string {
  let id: unknown;
  let input: unknown;
  // The step's own context: a map's item reads its `item` and `index` too.
  const context = ctx.templateContext(step.id);
  try {
    id = child.id === undefined ? defaultChildId(ctx.state.id, step.id) : renderTemplates(child.id, context);
    input = child.input === undefined ? undefined : renderTemplates(child.input, context);
  } catch (error) {
    if (error instanceof TemplateError) return `workflow: ${error.message}`;
    throw error;
  }
  const childId = typeof id === "string" ? childIdOf(id, step.attempt) : "";
  if (!ID_PATTERN.test(childId)) {
    return `the child workflow's id ${JSON.stringify(childId || id)?.slice(0, 160)} does not match ${ID_PATTERN.source}: give the step a workflow.id that does`;
  }
  return {
    id: childId,
    ...(child.definitionRef ? { definitionRef: child.definitionRef } : {}),
    ...(child.definition ? { definition: child.definition } : {}),
    ...(input === undefined ? {} : { input }),
  };
}
