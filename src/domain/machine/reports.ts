import type { Action } from "../schemas";
import { activeAttempt, isTerminal, type Attempt, type StepError, type StepState } from "../state";
import { renderTemplates, TemplateError, type TemplateContext } from "../templates";
import type { TransitionContext } from "./context";
import { advanceCompensation, dispatchReadySteps, failAttempt } from "./progress";

export type ReportRejection = { ok: false; code: "not_found" | "stale_attempt" | "gone" | "already_claimed"; message: string };

/** What an agent needs to perform one attempt. */
export interface ClaimedTask {
  workflowId: string;
  stepId: string;
  attempt: number;
  kind: Attempt["kind"];
  action: Action;
  idempotencyKey: string;
  /** When the attempt's start-to-close deadline passes; the agent aborts its request then. */
  deadlineAt: number;
  heartbeatMs: number;
  /** The last heartbeat details of any earlier attempt, so a retry can resume. */
  progress?: unknown;
}

const ENDED_STEP_STATUSES = new Set(["succeeded", "failed", "skipped", "compensated", "cancelled"]);

/**
 * Fencing: only the step's active attempt may change anything. A report for a step that has ended is `gone`;
 * one from any other attempt is stale: refused, and noted in the history without changing the state.
 */
export function locateAttempt(
  ctx: TransitionContext,
  stepId: string,
  n: number,
  report: string,
): { ok: true; step: StepState; attempt: Attempt } | ReportRejection {
  const step = ctx.step(stepId);
  if (!step) return { ok: false, code: "not_found", message: `workflow has no step "${stepId}"` };
  const active = activeAttempt(step);
  if (active && active.n === n) return { ok: true, step, attempt: active };
  if (ENDED_STEP_STATUSES.has(step.status) || isTerminal(ctx.state.status)) {
    return { ok: false, code: "gone", message: `step "${stepId}" has ended (${step.status})` };
  }
  ctx.note("stale_report_rejected", { stepId, attempt: n, data: { report, currentAttempt: step.attempt } });
  return {
    ok: false,
    code: "stale_attempt",
    message: `attempt ${n} of step "${stepId}" is no longer current (current attempt: ${step.attempt})`,
  };
}

export function claimAttempt(
  ctx: TransitionContext,
  stepId: string,
  n: number,
): { ok: true; task: ClaimedTask } | ReportRejection | { ok: false; code: "render_failed"; message: string } {
  const located = locateAttempt(ctx, stepId, n, "claim");
  if (!located.ok) return located;
  const { step, attempt } = located;
  if (attempt.status !== "scheduled") {
    return { ok: false, code: "already_claimed", message: `attempt ${n} of step "${stepId}" was already claimed` };
  }
  const plan = ctx.plan(stepId);
  attempt.status = "running";
  attempt.startedAt = ctx.now;
  attempt.lastHeartbeatAt = ctx.now;
  step.lastHeartbeatAt = ctx.now;
  if (attempt.kind === "action") step.status = "running";
  ctx.record("step_started", { stepId, attempt: n, data: { kind: attempt.kind } });

  let action: Action;
  try {
    action = renderTemplates(attempt.kind === "action" ? plan.action : plan.compensate, templateContext(ctx)) as Action;
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    failAttempt(ctx, step, attempt, { message: error.message, retryable: false });
    afterStepChange(ctx);
    return { ok: false, code: "render_failed", message: error.message };
  }
  const suffix = attempt.kind === "compensation" ? ":compensate" : "";
  return {
    ok: true,
    task: {
      workflowId: ctx.state.id,
      stepId,
      attempt: n,
      kind: attempt.kind,
      action,
      idempotencyKey: `${ctx.state.id}:${stepId}${suffix}`,
      deadlineAt: ctx.now + plan.timeouts.startToCloseMs,
      heartbeatMs: plan.timeouts.heartbeatMs,
      ...(step.progress === undefined ? {} : { progress: step.progress }),
    },
  };
}

function templateContext(ctx: TransitionContext): TemplateContext {
  const steps: TemplateContext["steps"] = {};
  for (const step of ctx.state.steps) {
    steps[step.id] = { attempt: step.attempt, ...(step.output === undefined ? {} : { output: step.output }) };
  }
  return { input: ctx.state.input, workflow: { id: ctx.state.id }, steps };
}

export function recordHeartbeat(
  ctx: TransitionContext,
  stepId: string,
  n: number,
  progress: { value?: unknown } = {},
): { ok: true; cancelRequested: boolean } | ReportRejection {
  // An attempt fenced by a cancel or an unwinding workflow is told so, letting the remote stop early.
  const fenced = ctx.step(stepId)?.attempts.find((attempt) => attempt.n === n);
  if (fenced?.status === "cancelled") return { ok: true, cancelRequested: true };
  const located = locateAttempt(ctx, stepId, n, "heartbeat");
  if (!located.ok) return located;
  const { attempt } = located;
  // Nothing runs before a claim, so there is no deadline to extend yet; the claim must stay possible.
  if (attempt.status === "scheduled") return { ok: true, cancelRequested: false };
  attempt.lastHeartbeatAt = ctx.now;
  located.step.lastHeartbeatAt = ctx.now;
  if ("value" in progress) located.step.progress = progress.value;
  ctx.changed = true;
  return { ok: true, cancelRequested: false };
}

export function recordSuccess(
  ctx: TransitionContext,
  stepId: string,
  n: number,
  output: unknown,
): { ok: true } | ReportRejection {
  const located = locateAttempt(ctx, stepId, n, "complete");
  if (!located.ok) return located;
  const { step, attempt } = located;
  attempt.status = "succeeded";
  attempt.endedAt = ctx.now;
  if (attempt.kind === "action") {
    step.status = "succeeded";
    step.output = output ?? null;
    delete step.error;
    ctx.state.completionOrder.push(step.id);
    ctx.record("step_succeeded", { stepId, attempt: n });
  } else {
    step.status = "compensated";
    ctx.record("step_compensated", { stepId, attempt: n });
  }
  afterStepChange(ctx);
  return { ok: true };
}

/** The remote answered 202: it holds the work now and reports through the task token. */
export function recordAccepted(ctx: TransitionContext, stepId: string, n: number): { ok: true } | ReportRejection {
  const located = locateAttempt(ctx, stepId, n, "accepted");
  if (!located.ok) return located;
  const { step, attempt } = located;
  if (attempt.status === "waiting") return { ok: true };
  attempt.status = "waiting";
  attempt.lastHeartbeatAt = ctx.now;
  step.lastHeartbeatAt = ctx.now;
  if (attempt.kind === "action") step.status = "waiting";
  ctx.record("step_waiting", { stepId, attempt: n });
  return { ok: true };
}

export function recordFailure(
  ctx: TransitionContext,
  stepId: string,
  n: number,
  error: StepError,
  retryAfterMs?: number,
): { ok: true } | ReportRejection {
  const located = locateAttempt(ctx, stepId, n, "fail");
  if (!located.ok) return located;
  failAttempt(ctx, located.step, located.attempt, error, retryAfterMs === undefined ? {} : { retryAfterMs });
  afterStepChange(ctx);
  return { ok: true };
}

/**
 * How often an unclaimed attempt's message is sent again after the queue dead-lettered it. A dead letter is our
 * own trouble (the consumer could not reach the object, or crashed), not the step's, so it uses no attempt;
 * but a message that dead-letters every time is poison, and must end rather than cycle for ever.
 */
export const MAX_REDISPATCHES = 2;

/**
 * The queue gave up on an attempt's message. An attempt no agent has claimed is dispatched again, without
 * using an attempt, up to MAX_REDISPATCHES times; after that it fails as retryable and the retry policy takes
 * over. For an attempt that was claimed or has ended, the dead letter is only noted.
 */
export function recordDeadLetter(ctx: TransitionContext, stepId: string, n: number): { ok: true } | ReportRejection {
  const step = ctx.step(stepId);
  if (!step) return { ok: false, code: "not_found", message: `workflow has no step "${stepId}"` };
  const attempt = activeAttempt(step);
  if (attempt?.n !== n || attempt.status !== "scheduled") {
    ctx.note("task_dead_lettered", { stepId, attempt: n, data: { outcome: "ignored: the attempt was claimed or has ended" } });
    return { ok: true };
  }
  const deadLetters = (attempt.deadLetters ?? 0) + 1;
  attempt.deadLetters = deadLetters;
  if (deadLetters <= MAX_REDISPATCHES) {
    ctx.record("task_dead_lettered", { stepId, attempt: n, data: { outcome: "re-dispatched", deadLetters } });
    ctx.resendAttempt(step, attempt);
    return { ok: true };
  }
  ctx.record("task_dead_lettered", { stepId, attempt: n, data: { outcome: "attempt failed", deadLetters } });
  failAttempt(ctx, step, attempt, { message: `the queue dead-lettered the task message ${deadLetters} times`, retryable: true });
  afterStepChange(ctx);
  return { ok: true };
}

export function afterStepChange(ctx: TransitionContext): void {
  if (ctx.state.status === "compensating") advanceCompensation(ctx);
  else dispatchReadySteps(ctx);
}
