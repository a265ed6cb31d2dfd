import { canonicalJson } from "../security/canonical-json";
import { activeAttempt, type StepError } from "./state";
import type { TransitionContext } from "./context";
import { afterStepChange } from "./dispatch";
import { failAttempt } from "./failure";
import { locateAttempt, type ReportRejection } from "./fencing";
import { completeStep } from "./steps";

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
  if ("value" in progress) {
    // The stall clock (progressMs) restarts only when the progress moves; the attempt's first progress starts it.
    if (attempt.progressAt === undefined || canonicalJson(progress.value) !== canonicalJson(located.step.progress)) attempt.progressAt = ctx.now;
    located.step.progress = progress.value;
  }
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
    completeStep(ctx, step, output, n);
  } else {
    step.status = "compensated";
    ctx.record({ type: "step_compensated", stepId, attempt: n });
  }
  afterStepChange(ctx);
  return { ok: true };
}

/**
 * The attempt asked the remote (`verify`) before sending the action again, and the effect of an earlier attempt
 * was there: the step succeeds with that answer and no second request is made.
 */
export function recordVerified(ctx: TransitionContext, stepId: string, n: number, output: unknown, status: number): { ok: true } | ReportRejection {
  const located = locateAttempt(ctx, stepId, n, "verified");
  if (!located.ok) return located;
  const { step, attempt } = located;
  attempt.status = "succeeded";
  attempt.endedAt = ctx.now;
  ctx.record({ type: "step_verified", stepId, attempt: n, data: { status } });
  completeStep(ctx, step, output, n);
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
  ctx.record({ type: "step_waiting", stepId, attempt: n });
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
    ctx.note({ type: "task_dead_lettered", stepId, attempt: n, data: { outcome: "ignored: the attempt was claimed or has ended" } });
    return { ok: true };
  }
  const deadLetters = (attempt.deadLetters ?? 0) + 1;
  attempt.deadLetters = deadLetters;
  if (deadLetters <= MAX_REDISPATCHES) {
    ctx.record({ type: "task_dead_lettered", stepId, attempt: n, data: { outcome: "re-dispatched", deadLetters } });
    ctx.resendAttempt(step, attempt);
    return { ok: true };
  }
  ctx.record({ type: "task_dead_lettered", stepId, attempt: n, data: { outcome: "attempt failed", deadLetters } });
  failAttempt(ctx, step, attempt, { message: `the queue dead-lettered the task message ${deadLetters} times`, retryable: true });
  afterStepChange(ctx);
  return { ok: true };
}
