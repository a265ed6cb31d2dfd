import { retryDelayMs } from "../retry-policy";
import { activeAttempt, latestAttempt, type Attempt, type StepError, type StepState } from "../state";
import type { TransitionContext } from "./context";

const SATISFIED = new Set(["succeeded", "skipped"]);

/** Dispatches every pending step whose dependencies are all satisfied, then completes the workflow if done. */
export function dispatchReadySteps(ctx: TransitionContext): void {
  const { state } = ctx;
  if (state.compensation || (state.status !== "running" && state.status !== "needs_attention")) return;
  const satisfied = new Set(state.steps.filter((s) => SATISFIED.has(s.status)).map((s) => s.id));
  for (const step of state.steps) {
    if (step.status !== "pending") continue;
    if (ctx.plan(step.id).dependsOn.every((dependency) => satisfied.has(dependency))) {
      ctx.scheduleAttempt(step, "action");
    }
  }
  if (state.steps.every((step) => SATISFIED.has(step.status))) completeWorkflow(ctx);
}

function completeWorkflow(ctx: TransitionContext): void {
  const { state } = ctx;
  state.status = "completed";
  state.output = Object.fromEntries(state.steps.map((step) => [step.id, step.output ?? null]));
  state.endedAt = ctx.now;
  ctx.record("workflow_completed");
}

/** After an operator action the workflow waits on people only while some step is still failed. */
export function settleAttentionStatus(ctx: TransitionContext): void {
  const { state } = ctx;
  state.status = state.steps.some((step) => step.status === "failed") ? "needs_attention" : "running";
}

/**
 * Ends an attempt that did not succeed. A retryable failure with budget left waits out its backoff;
 * otherwise the step has failed for good and the workflow's `onFailure` decides what happens next.
 */
export function failAttempt(
  ctx: TransitionContext,
  step: StepState,
  attempt: Attempt,
  error: StepError,
  outcome: { timedOut?: boolean; retryAfterMs?: number } = {},
): void {
  attempt.status = outcome.timedOut ? "timed_out" : "failed";
  attempt.endedAt = ctx.now;
  attempt.error = error;
  step.error = error;
  const policy = ctx.plan(step.id).retry;
  const mayRetry = error.retryable !== false && step.budgetUsed < policy.maxAttempts;
  const final = !mayRetry || (attempt.kind === "action" && ctx.state.status === "compensating");
  const fields = { stepId: step.id, attempt: attempt.n };
  if (!outcome.timedOut) ctx.record("step_failed", { ...fields, data: { kind: attempt.kind, error, final } });

  if (!final) {
    const delayMs = retryDelayMs(policy, step.budgetUsed, ctx.random, outcome.retryAfterMs);
    step.nextRetryAt = ctx.now + delayMs;
    if (attempt.kind === "action") step.status = "retrying";
    ctx.record("step_retry_scheduled", { ...fields, data: { kind: attempt.kind, delayMs, nextRetryAt: step.nextRetryAt } });
    return;
  }
  step.status = "failed";
  delete step.nextRetryAt;
  if (outcome.timedOut) ctx.record("step_failed", { ...fields, data: { kind: attempt.kind, error, final } });
  if (attempt.kind === "compensation") {
    ctx.state.status = "needs_attention";
    ctx.record("workflow_escalated", { stepId: step.id, data: { phase: "compensation", error } });
    return;
  }
  failedForGood(ctx, step, error);
}

function failedForGood(ctx: TransitionContext, step: StepState, error: StepError): void {
  const { state } = ctx;
  const workflowError: StepError = { message: `step "${step.id}" failed: ${error.message}` };
  switch (state.plan.onFailure) {
    case "escalate":
      state.status = "needs_attention";
      ctx.record("workflow_escalated", { stepId: step.id, data: { phase: "action", error } });
      return;
    case "fail":
      state.error = workflowError;
      failWorkflow(ctx);
      return;
    case "compensate":
      state.error = workflowError;
      beginCompensation(ctx, "compensated");
      return;
  }
}

export function failWorkflow(ctx: TransitionContext): void {
  fenceUnfinishedSteps(ctx);
  ctx.state.status = "failed";
  ctx.state.endedAt = ctx.now;
  ctx.record("workflow_failed", { data: { error: ctx.state.error } });
}

/**
 * Stops every step that has not finished: running attempts are fenced (a late report from them is refused)
 * and queued, pending or backing-off work is cancelled. Returns the steps with an attempt that had already
 * started, newest first: their remote effect may have happened, so compensation must cover them too.
 */
function fenceUnfinishedSteps(ctx: TransitionContext): string[] {
  const started: { id: string; startedAt: number }[] = [];
  for (const step of ctx.state.steps) {
    const attempt = activeAttempt(step);
    if (attempt) {
      attempt.status = "cancelled";
      attempt.endedAt = ctx.now;
    }
    if (attempt || step.status === "retrying") {
      // Any earlier action attempt that started (a silent agent, a timed-out call) may have taken effect.
      const starts = step.attempts.filter((a) => a.kind === "action" && a.startedAt !== undefined).map((a) => a.startedAt ?? 0);
      if (starts.length > 0) started.push({ id: step.id, startedAt: Math.max(...starts) });
    }
    if (attempt || step.status === "pending" || step.status === "retrying") {
      step.status = "cancelled";
      delete step.nextRetryAt;
      ctx.changed = true;
    }
  }
  return started.sort((a, b) => b.startedAt - a.startedAt).map((entry) => entry.id);
}

/** An action attempt that started and ended without the remote's answer (a timeout, a broken request). */
function mayHaveTakenEffect(step: StepState): boolean {
  return step.attempts.some(
    (attempt) =>
      attempt.kind === "action" &&
      attempt.startedAt !== undefined &&
      (attempt.status === "timed_out" || (attempt.status === "failed" && attempt.error?.status === undefined && attempt.error?.retryable !== false)),
  );
}

/** The saga: compensate what may have taken effect, in reverse order of completion, one step at a time. */
export function beginCompensation(ctx: TransitionContext, endStatus: "compensated" | "cancelled"): void {
  const { state } = ctx;
  const interrupted = fenceUnfinishedSteps(ctx);
  // A step that failed for good after an attempt with no clear answer (it timed out, or the request broke
  // off) may have taken effect all the same (an ambiguous outcome): it is undone first, as the newest.
  const ambiguous = state.steps.filter((step) => step.status === "failed" && mayHaveTakenEffect(step)).map((step) => step.id);
  const completed = [...state.completionOrder].reverse().filter((id) => ctx.step(id)?.status === "succeeded");
  const queue = [...ambiguous, ...interrupted, ...completed].filter((id) => ctx.plan(id).compensate !== undefined);
  state.compensation = { queue, endStatus };
  state.status = "compensating";
  ctx.record("compensation_started", { data: { steps: queue, endStatus } });
  advanceCompensation(ctx);
}

/** Starts the next compensation, or ends the workflow when none is left. */
export function advanceCompensation(ctx: TransitionContext): void {
  const { state } = ctx;
  const compensation = state.compensation;
  if (!compensation || state.status !== "compensating") return;
  while (compensation.queue.length > 0) {
    const head = ctx.step(compensation.queue[0] ?? "");
    if (!head || head.status === "compensated" || head.status === "skipped") {
      compensation.queue.shift();
      continue;
    }
    // In flight, backing off, or failed for good and waiting on an operator.
    // A compensation in flight, or one that failed for good (an operator decides), holds the queue.
    if (head.status === "compensating" || (head.status === "failed" && latestAttempt(head)?.kind === "compensation")) return;
    head.budgetUsed = 0;
    ctx.scheduleAttempt(head, "compensation");
    return;
  }
  state.status = compensation.endStatus;
  state.endedAt = ctx.now;
  ctx.record(compensation.endStatus === "cancelled" ? "workflow_cancelled" : "workflow_compensated");
}
