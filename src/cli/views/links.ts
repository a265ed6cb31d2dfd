import type { StepView, WorkflowView } from "../api-types";

/**
 * A child workflow's fields in the views: the parent's `workflow` step carries `child`, the child carries
 * `parent`. They are read where present and typed here, so the CLI shows them whichever version of the API answers.
 */
export interface ChildLink {
  id: string;
  status: string;
}

export interface ParentLink {
  id: string;
  stepId: string;
}

export function childOf(step: StepView): ChildLink | undefined {
  return (step as StepView & { child?: ChildLink }).child;
}

export function parentOf(workflow: WorkflowView): ParentLink | undefined {
  return (workflow as WorkflowView & { parent?: ParentLink }).parent;
}

/** "order-1 (step ship)": where a child workflow was started from. */
export function parentWords(parent: ParentLink): string {
  return `${parent.id} (step ${parent.stepId})`;
}

/** "child order-1:ship running". */
export function childWords(child: ChildLink): string {
  return `child ${child.id} ${child.status}`;
}
