// What `watch` shows, as pure functions of the workflow views it polled: the full frame a terminal redraws, and
// the lines a pipe gets, one per change.
import { ENDED_STEP_STATUSES } from "../../domain/contract";
import type { StepView, WorkflowView } from "../api-types";
import { clip, relative, time } from "../format";
import { childOf, parentOf, parentWords } from "../views/links";
import { stepDetail } from "../views/workflow";
import { nextStepLines } from "./next-steps";

// Steps that ended count as done for the progress bar (a failed one leaves only through an operator or a redrive).

const STEP_MARKS: Record<string, string> = {
  pending: "·",
  scheduled: "○",
  running: "▶",
  waiting: "…",
  sleeping: "z",
  retrying: "↻",
  succeeded: "✓",
  skipped: "-",
  failed: "✗",
  compensating: "↺",
  compensated: "↩",
  cancelled: "✗",
};

const BAR_WIDTH = 24;

export function progressOf(workflow: WorkflowView): { settled: number; total: number } {
  return { settled: workflow.steps.filter((step) => ENDED_STEP_STATUSES.includes(step.status)).length, total: workflow.steps.length };
}

/** `[██████████░░░░░░░░░░░░░░] 2/5` */
export function progressBar({ settled, total }: { settled: number; total: number }, width = BAR_WIDTH): string {
  const filled = total === 0 ? width : Math.round((settled / total) * width);
  return `[${"█".repeat(filled)}${"░".repeat(width - filled)}] ${settled}/${total}`;
}

/** The whole view for a terminal: the workflow and its bar, then one line per step; no line wider than `columns`. */
export function frameLines(workflow: WorkflowView, now: number, columns: number): string[] {
  const idWidth = Math.max(...workflow.steps.map((step) => step.id.length), 4);
  const parent = parentOf(workflow);
  const lines = [
    `${workflow.id} (${workflow.name})  ${workflow.status}  ${progressBar(progressOf(workflow))}`,
    ...(parent ? [`  parent: ${parentWords(parent)}`] : []),
    ...workflow.steps.map((step) => `  ${STEP_MARKS[step.status] ?? "?"} ${step.id.padEnd(idWidth)}  ${stepSummary(step, now)}`),
  ];
  if (workflow.error) lines.push(`  error: ${workflow.error.message}`);
  lines.push(...nextStepLines(workflow).map((line) => `  ${line}`));
  if (workflow.status === "scheduled" && workflow.startAt !== undefined) lines.push(`  starts ${time(workflow.startAt)} (${relative(workflow.startAt, now)}); nothing runs before`);
  return lines.map((line) => clip(line, Math.max(20, columns - 1)));
}

function stepSummary(step: StepView, now: number): string {
  const attempt = step.attempt > 0 ? `attempt ${step.attempt}` : "";
  return [step.status.padEnd(12), attempt.padEnd(10), stepDetail(step, now)].join(" ").trimEnd();
}

/**
 * The lines a pipe gets for what changed since `previous` (everything the first time): the workflow's status and
 * progress, and each step whose status, attempt, map item counts or child's status moved. Details that only age
 * (relative times) are no change.
 */
export function changeLines(previous: WorkflowView | undefined, current: WorkflowView, now: number): string[] {
  const lines: string[] = [];
  const parent = parentOf(current);
  if (previous === undefined) lines.push(`workflow ${current.id} (${current.name}): ${workflowSummary(current)}${parent ? `, child of ${parentWords(parent)}` : ""}`);
  const before = new Map(previous?.steps.map((step) => [step.id, step]));
  for (const step of current.steps) {
    const earlier = before.get(step.id);
    if (earlier && !stepMoved(earlier, step)) continue;
    const detail = stepDetail(step, now);
    lines.push(`step ${step.id}: ${step.status}${step.attempt > 0 ? `, attempt ${step.attempt}` : ""}${detail ? `: ${detail}` : ""}`);
  }
  if (previous !== undefined && previous.status !== current.status) lines.push(`workflow ${current.id}: ${workflowSummary(current)}`);
  return lines;
}

function stepMoved(earlier: StepView, step: StepView): boolean {
  return (
    earlier.status !== step.status ||
    earlier.attempt !== step.attempt ||
    JSON.stringify(earlier.items) !== JSON.stringify(step.items) ||
    childOf(earlier)?.status !== childOf(step)?.status
  );
}

function workflowSummary(workflow: WorkflowView): string {
  const { settled, total } = progressOf(workflow);
  return `${workflow.status}, ${settled}/${total} steps settled`;
}
