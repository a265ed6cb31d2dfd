// What a workflow that waits for a person needs, as the commands that give it: watch prints them, so what it
// reports can be resolved from the same command line.
import type { WorkflowView } from "../api-types";

/** The statuses in which nothing moves until an operator acts. */
const WAITS_FOR_OPERATOR = ["needs_attention", "paused"];

export function waitsForOperator(workflow: WorkflowView): boolean {
  return WAITS_FOR_OPERATOR.includes(workflow.status);
}

/** The commands that move the workflow on: for each failed step retry or skip it, else give up and compensate; resume a paused one. */
export function nextCommands(workflow: WorkflowView): string[] {
  const id = quoted(workflow.id);
  if (workflow.status === "paused") return [`shepherd resume ${id}`];
  if (workflow.status !== "needs_attention") return [];
  const failed = workflow.steps.filter((step) => step.status === "failed").map((step) => quoted(step.id));
  return [...failed.flatMap((step) => [`shepherd retry-step ${id} ${step}`, `shepherd skip-step ${id} ${step} --output '<json>'`]), `shepherd compensate ${id}`];
}

/** What the workflow waits for, in a line, then its commands. */
export function nextStepLines(workflow: WorkflowView): string[] {
  const commands = nextCommands(workflow);
  if (commands.length === 0) return [];
  const why = workflow.status === "paused" ? "paused until resumed" : "needs an operator: retry or skip the failed step, or compensate";
  return [why, ...commands.map((command) => `  ${command}`)];
}

/** An id as a shell reads it: as it is when plain, else in single quotes. */
function quoted(text: string): string {
  return /^[\w.:@/-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}
