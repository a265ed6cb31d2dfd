import { backoffMs } from "./backoff";
import type { HistoryEntry } from "./history";
import { findStepPlan, type StepPlan } from "../language/plan";
import type { Attempt, AttemptKind, StepState, WorkflowState } from "./state";
import type { TemplateContext } from "../language/templates";
import { queueCheckDelayMs } from "./queue-check";
import type { EnqueueAttempt } from "./effects";

/** Lost-message checks after a resend: 2 min, 4 min … at most an hour apart. */
const QUEUE_CHECK_BACKOFF = { initialMs: 60_000, maxMs: 3_600_000, jitter: 0.2 };


/**
 * The working copy of one transition: the pure functions mutate `state` (a private clone of the input) and
 * append to `effects` and `history`, which the shell persists together.
 */
export class TransitionContext {
  /** The attempts to send; the commit adds the rest of the effects (see commitPlan). */
  readonly effects: EnqueueAttempt[] = [];
  readonly history: HistoryEntry[] = [];
  changed = false;

  constructor(
    readonly state: WorkflowState,
    readonly now: number,
    readonly random: () => number,
  ) {}

  /** Appends to the history as part of a state change. */
  record(entry: HistoryEntry): void {
    this.history.push(entry);
    this.changed = true;
  }

  /** Appends to the history without changing the state, e.g. a refused report. */
  note(entry: HistoryEntry): void {
    this.history.push(entry);
  }

  step(stepId: string): StepState | undefined {
    return this.state.steps.find((step) => step.id === stepId);
  }

  plan(stepId: string): StepPlan {
    const plan = findStepPlan(this.state.plan, stepId);
    if (!plan) throw new Error(`no plan for step ${stepId}`);
    return plan;
  }

  /** What templates read: the input, the workflow's id, and every step's output so far. */
  templateContext(): TemplateContext {
    const steps: TemplateContext["steps"] = {};
    for (const step of this.state.steps) {
      steps[step.id] = { attempt: step.attempt, ...(step.output === undefined ? {} : { output: step.output }) };
    }
    return { input: this.state.input, workflow: { id: this.state.id }, steps };
  }

  /** Starts a new attempt; the attempt number is the step's fencing token. */
  scheduleAttempt(step: StepState, kind: AttemptKind): void {
    step.attempt += 1;
    step.budgetUsed += 1;
    delete step.nextRetryAt;
    step.attempts.push({ n: step.attempt, kind, status: "scheduled", scheduledAt: this.now, queueCheckAt: this.now + queueCheckDelayMs(this.random) });
    step.status = kind === "action" ? "scheduled" : "compensating";
    this.record({ type: "step_scheduled", stepId: step.id, attempt: step.attempt, data: { kind } });
    this.effects.push({ type: "EnqueueAttempt", stepId: step.id, attempt: step.attempt, kind });
  }

  /**
   * Sends the task message of an attempt that is still queued once more: same number, no attempt used. Its next
   * lost-message check backs off, so a queue that keeps losing messages is not flooded with copies.
   */
  resendAttempt(step: StepState, attempt: Attempt): void {
    attempt.resends = (attempt.resends ?? 0) + 1;
    attempt.sentAt = this.now;
    attempt.queueCheckAt = this.now + backoffMs(attempt.resends, QUEUE_CHECK_BACKOFF, this.random);
    this.changed = true;
    this.effects.push({ type: "EnqueueAttempt", stepId: step.id, attempt: attempt.n, kind: attempt.kind });
  }
}
