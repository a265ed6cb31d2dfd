// The backlog in Shepherd's own queue fails no workflow (row 26; docs/architecture.md, "Dispatch under load"):
// no attempt timed out `schedule_to_start` unless its step asked for that deadline, and every burst workflow
// ended as the remote's faults alone explain. Causes of the other endings are named, so a failure here points at
// the queue or elsewhere.
import { isTerminal } from "../client.ts";
import type { AttemptView, StepView, WorkflowView } from "../api-shapes.ts";
import type { Definition, SoakWorkflow } from "../definitions.ts";
import type { Final } from "../finals.ts";
import { fail, pass, tally } from "./check.ts";
import type { Check } from "./check.ts";

interface Unasked {
  id: string;
  kind: string;
  stepId: string | undefined;
  attempt: number | undefined;
  source: "view" | "history";
  workflowStatus: string | null;
}

/** How the burst's workflows ended, against what the remote's faults explain. */
interface BurstEndings {
  total: number;
  completed: number;
  declinedCompensated: number;
  remoteExhausted: number;
  /** A workflow that never ended is the terminal check's failure; counting it here too would blame the queue twice. */
  notEnded: number;
  unexpected: { id: string; status: string | null; declinedStep: string | null; cause: string }[];
}

/**
 * No attempt of a step that did not set scheduleToStartMs timed out `schedule_to_start` (read from the view's
 * attempts and from the history's step_timed_out events, either is enough), and every burst workflow completed
 * unless the remote declined it by design or its faults used up a step's every attempt.
 */
export function checkScheduleToStart(finals: readonly Final[], workflows: readonly SoakWorkflow[]): Check {
  const name = "no workflow failed by a schedule-to-start it did not ask for";
  const byId = new Map(workflows.map((wf) => [wf.id, wf]));
  const unasked = finals.flatMap((f) => {
    const wf = byId.get(f.id);
    return wf ? unaskedTimeouts(f, wf) : [];
  });
  const burst = burstEndings(finals.flatMap((f) => {
    const wf = byId.get(f.id);
    return wf?.kind === "burst" ? [{ f, wf }] : [];
  }));
  const causes = tally(burst.unexpected.map((u) => u.cause));
  const workflowsHit = new Set(unasked.map((u) => u.id)).size;
  const asExpected = burst.completed + burst.declinedCompensated + burst.remoteExhausted;
  const detail =
    `${unasked.length} unasked schedule_to_start timeout(s) in ${workflowsHit} of ${finals.length} workflows` +
    (burst.total
      ? `; burst ${asExpected}/${burst.total} as expected (${burst.completed} completed, ${burst.declinedCompensated} declined by design → compensated` +
          (burst.remoteExhausted ? `, ${burst.remoteExhausted} whose injected faults used up every attempt of a step` : "") +
          ")"
      : "; no burst") +
    (burst.unexpected.length ? `; ${burst.unexpected.length} other ending(s): ${Object.entries(causes).map(([c, n]) => `${c} ${n}`).join(", ")}` : "") +
    (burst.notEnded ? `; ${burst.notEnded} not ended (see the terminal check)` : "");
  return (unasked.length || burst.unexpected.length ? fail : pass)(name, detail, { unasked: unasked.slice(0, 30), unexpectedBurstEndings: burst.unexpected.slice(0, 30) });
}

/** A workflow's attempts that timed out schedule_to_start although their step did not ask for it, once each. */
function unaskedTimeouts(f: Final, wf: SoakWorkflow): Unasked[] {
  const found: Unasked[] = [];
  const seen = new Set<string>();
  const note = (stepId: string | undefined, attempt: number | undefined, source: Unasked["source"]): void => {
    if (asksScheduleToStart(wf.payload.definition, stepId) || seen.has(`${stepId}#${attempt}`)) return;
    seen.add(`${stepId}#${attempt}`);
    found.push({ id: f.id, kind: wf.kind, stepId, attempt, source, workflowStatus: f.view?.status ?? null });
  };
  for (const step of f.view?.steps ?? []) {
    for (const a of step.attempts ?? []) if (a.error?.timeout === "schedule_to_start") note(step.id, a.n, "view");
  }
  for (const e of f.events) if (e.type === "step_timed_out" && e.data?.timeout === "schedule_to_start") note(e.stepId, e.attempt, "history");
  return found;
}

/** Whether a step's own timeouts or its definition's defaults set scheduleToStartMs. */
function asksScheduleToStart(definition: Definition, stepId: string | undefined): boolean {
  const step = definition.steps.find((s) => s.id === stepId);
  return step?.timeouts?.scheduleToStartMs !== undefined || definition.defaults?.timeouts?.scheduleToStartMs !== undefined;
}

function burstEndings(burst: readonly { f: Final; wf: SoakWorkflow }[]): BurstEndings {
  const endings: BurstEndings = { total: burst.length, completed: 0, declinedCompensated: 0, remoteExhausted: 0, notEnded: 0, unexpected: [] };
  for (const { f, wf } of burst) {
    const status = f.view?.status ?? null;
    if (!f.view || !isTerminal(status)) endings.notEnded += 1;
    else if (status === "completed") endings.completed += 1;
    else if (wf.declinedStep && status === "compensated") endings.declinedCompensated += 1;
    else if (remoteUsedUpRetries(f.view, wf.payload.definition)) endings.remoteExhausted += 1;
    else endings.unexpected.push({ id: f.id, status, declinedStep: wf.declinedStep, cause: endingCause(f.view) });
  }
  return endings;
}

/** A step's action attempts: compensation attempts (numbered on after them) are not the step's failure. */
const actionAttempts = (step: StepView): AttemptView[] => (step.attempts ?? []).filter((a) => (a.kind ?? "action") === "action");

/**
 * The step whose action ended the workflow: its last action attempt failed or timed out. Not merely the first
 * step with an error: a step before it that succeeded can carry the error of a compensation attempt that
 * failed and was retried.
 */
function endingStep(view: WorkflowView): StepView | undefined {
  return view.steps.find((s) => s.status !== "completed" && ["failed", "timed_out"].includes(actionAttempts(s).at(-1)?.status ?? ""));
}

/**
 * Whether the step that ended the workflow failed because injected faults (the remote's, and the Worker's
 * that kill or silence an agent) used up its whole retry budget: every action attempt the policy allows was
 * made, and none of them ended for a queue cause (schedule-to-start or dead letters). The soak's random faults
 * make that a rare, legitimate ending (about 1 in 300 burst workflows at the soak's fault rates); it is the
 * faults' doing, not the backlog's.
 */
function remoteUsedUpRetries(view: WorkflowView, definition: Definition): boolean {
  const maxAttempts = definition.defaults?.retry?.maxAttempts;
  const ending = endingStep(view);
  if (!ending || maxAttempts === undefined) return false;
  const step = definition.steps.find((s) => s.id === ending.id);
  const budget = step?.retry?.maxAttempts ?? maxAttempts;
  const attempts = actionAttempts(ending);
  const queueCause = (a: AttemptView): boolean => a.error?.timeout === "schedule_to_start" || /dead-lettered/.test(a.error?.message ?? "");
  return attempts.length >= budget && !attempts.some(queueCause);
}

/** Why a workflow did not complete, in a word or two: the timeout kind or HTTP status of the step that ended it. */
function endingCause(view: WorkflowView): string {
  const failedStep = endingStep(view) ?? view.steps.find((s) => s.error && (s.status === "failed" || s.status === "compensated" || s.status === "cancelled")) ?? view.steps.find((s) => s.error);
  const error = (failedStep && actionAttempts(failedStep).at(-1)?.error) ?? failedStep?.error ?? view.error;
  if (!error) return view.status;
  const why = error.timeout ?? (error.status ? `HTTP ${error.status}` : error.message?.slice(0, 40));
  return `${view.status}: ${why}`;
}
