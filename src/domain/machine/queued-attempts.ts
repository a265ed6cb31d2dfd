import { QUEUE_LAG_FRESH_MS, type QueueLagSample } from "../admission/back-pressure";
import { activeAttempt, type Attempt, type StepState, type WorkflowState } from "./state";
import type { TransitionContext } from "./context";
import { QUEUE_CHECK_MS, queueCheckDelayMs } from "./queue-check";

/**
 * The queue delivers roughly in order. A message this much older than the ones being delivered now should
 * have arrived already: it was lost (a queue that forgot it, e.g. a local queue across a restart).
 */
export const QUEUE_ORDER_SLACK_MS = 30_000;

/** When the supervisor asks about a queued attempt's message. */
export function queueCheckAt(attempt: Attempt): number {
  return attempt.queueCheckAt ?? (attempt.sentAt ?? attempt.scheduledAt) + QUEUE_CHECK_MS;
}

/** The attempts waiting in our queue for an agent to claim them. */
function queuedAttempts(state: WorkflowState): Attempt[] {
  return state.steps.map(activeAttempt).filter((attempt): attempt is Attempt => attempt?.status === "scheduled");
}

/** Since when the oldest attempt no agent has claimed yet has waited: our own queue's lag for this workflow. */
export function unclaimedSince(state: WorkflowState): number | undefined {
  const queued = queuedAttempts(state);
  return queued.length === 0 ? undefined : Math.min(...queued.map((attempt) => attempt.scheduledAt));
}

/** Whether a tick now would check a queued attempt, so the shell knows to read the queue's lag first. */
export function queueChecksDue(state: WorkflowState, now: number): boolean {
  return queuedAttempts(state).some((attempt) => queueCheckAt(attempt) <= now);
}

/**
 * An attempt has waited in our queue past its check. While the queue is delivering messages at least about
 * as old as this one, it is only slow: ask again later, send nothing (a second message for an attempt still
 * queued would only lengthen the backlog). Otherwise (younger messages are being delivered, or none at all,
 * which means the queue is empty) the message was lost: send the same attempt again, using no attempt.
 */
export function checkQueuedAttempt(ctx: TransitionContext, step: StepState, attempt: Attempt, queueLag: QueueLagSample | undefined): void {
  const waitedMs = ctx.now - (attempt.sentAt ?? attempt.scheduledAt);
  const delivering = queueLag !== undefined && ctx.now - queueLag.at <= QUEUE_LAG_FRESH_MS;
  if (delivering && waitedMs <= queueLag.lagMs + QUEUE_ORDER_SLACK_MS) {
    attempt.queueCheckAt = ctx.now + queueCheckDelayMs(ctx.random);
    ctx.changed = true;
    return;
  }
  ctx.record({
    type: "task_resent",
    stepId: step.id,
    attempt: attempt.n,
    data: { reason: delivering ? "younger messages were delivered" : "no messages are being delivered", waitedMs, queueLagMs: delivering ? queueLag.lagMs : null },
  });
  ctx.resendAttempt(step, attempt);
}
