/**
 * The workflow list's triage: for an open workflow in a state worth an operator's attention, one line of plain
 * words ("retrying notify 6/8 after 503", "waiting for event approved", "needs attention: charge failed (422)"),
 * the step it names, that step's attempts and the next deadline. It is read off the diagnosis' `blockedOn`
 * (diagnosis.ts), never worked out a second way.
 *
 * The line is carried to the D1 index by the index entry, and a change of line is a reason to write the entry
 * (commit-plan.ts). So it must be a function of the state alone, and it must not change on the happy path: a step
 * that runs and succeeds first time has no line, nor does one that sleeps, or waits for its child, its queue or
 * its worker's first poll. A heartbeat must not change a line either (the progress is named only where no attempt
 * runs), nor the start of a retry (a retry waiting out its backoff and the same retry under way read the same).
 */
import { findStepPlan } from "../language/plan";
import { stepKindOf } from "../language/steps";
import { blockers, type BlockedOn } from "./diagnosis";
import type { Triage } from "./index-entry";
import { activeAttempt, isTerminal, latestAttempt, type Attempt, type StepError, type StepState, type WorkflowState } from "./state";

export type { Triage };

/** The first of these found is the line: what needs a person first, then what fails, then what waits. */
const RANK = { operator: 0, paused: 1, deferred: 2, circuit: 3, retrying: 4, worker: 5, wait: 6 } as const;

interface Ranked {
  rank: number;
  triage: Triage;
}

/** The line of an open workflow worth attention; undefined for one that is simply running, and for an ended one. */
export function triageOf(state: WorkflowState): Triage | undefined {
  if (isTerminal(state.status)) return undefined;
  let best: Ranked | undefined;
  for (const blocked of blockers(state)) {
    const found = attentionOf(state, blocked);
    if (found && (best === undefined || found.rank < best.rank)) best = found;
  }
  return best?.triage;
}

function attentionOf(state: WorkflowState, blocked: BlockedOn): Ranked | undefined {
  if (blocked.reason === "paused") return { rank: RANK.paused, triage: { summary: "paused" } };
  if (blocked.reason === "scheduled_start") {
    return state.startRetryAt === undefined ? undefined : ranked(RANK.deferred, "start deferred: the task queue is behind", blocked);
  }
  const step = state.steps.find((candidate) => candidate.id === blocked.stepId);
  if (!step) return undefined;
  switch (blocked.reason) {
    case "needs_operator":
      return ranked(RANK.operator, `needs attention: ${whatOf(step, latestAttempt(step))} failed (${causeOf(step.error, step.progress)})`, blocked, attemptsOf(state, step, 0));
    case "circuit_open":
      return ranked(RANK.circuit, `circuit open for ${step.parked?.host ?? "its host"}`, blocked, attemptsOf(state, step, 0));
    case "backing_off":
      return retrying(state, step, latestAttempt(step), blocked, 1);
    case "waiting_for_agent":
    case "waiting_for_worker":
    case "running":
      return activeRetry(state, step, blocked) ?? movedWorkerTask(step, blocked);
    default:
      return kindWait(state, step, blocked);
  }
}

function ranked(rank: number, summary: string, blocked: BlockedOn, attempts?: Triage["attempts"]): Ranked {
  return {
    rank,
    triage: {
      summary,
      ...(blocked.stepId === undefined ? {} : { stepId: blocked.stepId }),
      ...(attempts === undefined ? {} : { attempts }),
      ...(blocked.until === undefined ? {} : { nextDeadlineAt: blocked.until }),
    },
  };
}

/** A step's attempts against its retry policy; `ahead` counts a retry not started yet. None for a step with none. */
function attemptsOf(state: WorkflowState, step: StepState, ahead: number): Triage["attempts"] {
  const max = findStepPlan(state.plan, step.id)?.retry.maxAttempts;
  const used = step.budgetUsed + ahead;
  return max === undefined || used === 0 ? undefined : { used, max };
}

/** `notify`, or `compensation of charge` when the attempt undoes it. */
function whatOf(step: StepState, attempt: Attempt | undefined): string {
  return attempt?.kind === "compensation" ? `compensation of ${step.id}` : step.id;
}

function retrying(state: WorkflowState, step: StepState, failed: Attempt | undefined, blocked: BlockedOn, ahead: number): Ranked {
  const attempts = attemptsOf(state, step, ahead);
  const count = attempts ? ` ${attempts.used}/${attempts.max}` : "";
  return ranked(RANK.retrying, `retrying ${whatOf(step, failed)}${count} after ${causeOf(failed?.error)}`, blocked, attempts);
}

/** An attempt under way that follows a failed one of the same kind, in the same retry budget: a retry. */
function activeRetry(state: WorkflowState, step: StepState, blocked: BlockedOn): Ranked | undefined {
  const current = activeAttempt(step);
  const previous = step.attempts.at(-2);
  if (!current || !previous || step.budgetUsed < 2 || previous.kind !== current.kind) return undefined;
  if (previous.status !== "failed" && previous.status !== "timed_out") return undefined;
  return retrying(state, step, previous, blocked, 0);
}

/** A worker task that no worker took in time in its first pool, now offered to a fallback pool. */
function movedWorkerTask(step: StepState, blocked: BlockedOn): Ranked | undefined {
  if (blocked.reason !== "waiting_for_worker" || !(activeAttempt(step)?.poolMoves ?? 0)) return undefined;
  return ranked(RANK.worker, `waiting for a worker in pool ${blocked.pool ?? "?"}`, blocked);
}

/** A step of a kind that waits on someone (an event), in its kind's words. */
function kindWait(state: WorkflowState, step: StepState, blocked: BlockedOn): Ranked | undefined {
  const plan = findStepPlan(state.plan, step.id);
  const kind = plan && stepKindOf(plan.kind);
  const attention = kind?.timer?.attention ?? kind?.waits?.attention;
  return plan && attention ? ranked(RANK.wait, attention(plan as never), blocked) : undefined;
}

/** Longest error message quoted in a line; the workflow's page has the whole of it. */
const MESSAGE_WORDS_MAX = 60;

/**
 * Why an attempt failed, in a few words: the remote's status, the deadline that passed, or the error's message.
 * `progress` (the last heartbeat's) is named only where it can no longer change: no attempt of the step runs.
 */
export function causeOf(error: StepError | undefined, progress?: unknown): string {
  if (!error) return "an error";
  if (error.status !== undefined) return String(error.status);
  const at = progressWords(progress);
  switch (error.timeout) {
    case "heartbeat":
      return at ? `no heartbeat at ${at}` : "no heartbeat";
    case "stalled":
      return at ? `stalled at ${at}` : "no progress";
    case "start_to_close":
      return "a timeout";
    case "schedule_to_start":
      return "not started in time";
    case "wait_timeout":
      return "the wait timed out";
  }
  const message = error.message.trim();
  return message.length > MESSAGE_WORDS_MAX ? `${message.slice(0, MESSAGE_WORDS_MAX - 1)}…` : message || "an error";
}

/** `47 %` from a heartbeat's `{percent: 47}` or `47`; a short text as it is; nothing for anything else. */
export function progressWords(progress: unknown): string | undefined {
  const value = typeof progress === "object" && progress !== null && "percent" in progress ? progress.percent : progress;
  if (typeof value === "number" && Number.isFinite(value)) return `${value} %`;
  if (typeof value === "string" && value.length > 0 && value.length <= 24) return value;
  return undefined;
}
