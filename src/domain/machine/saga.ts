/** The saga: when a workflow unwinds, what may have taken effect is compensated, newest first, one at a time. */
import { activeAttempt, latestAttempt, type StepState } from "./state";
import type { TransitionContext } from "./context";
import { endedWithoutAnswer } from "./ambiguous";
import { advanceMapUndo, fenceMaps, mapNeedsUndo } from "./map/undo";
import { isMapStep } from "./map/progress";
import { withdrawUnclaimed } from "./pool-offers";

/**
 * Steps with no attempt under way that are still open: not started, backing off (an action, or a compensation
 * when a terminate stops the saga), asleep, or waiting for an event.
 */
const UNSTARTED_OR_TIMED = new Set(["pending", "retrying", "compensating", "sleeping", "waiting"]);

/**
 * Stops every step that has not finished: running attempts are fenced (a late report from them is refused)
 * and queued, pending or backing-off work is cancelled. Returns the steps with an attempt that had already
 * started, newest first: their remote effect may have happened, so compensation must cover them too.
 */
export function fenceUnfinishedSteps(ctx: TransitionContext): string[] {
  // A map's items in flight are stopped by their map, which undoes them (and those that succeeded) itself.
  const maps = fenceMaps(ctx);
  const started: { id: string; startedAt: number }[] = [];
  for (const step of ctx.state.steps) {
    const attempt = activeAttempt(step);
    if (attempt) {
      attempt.status = "cancelled";
      attempt.endedAt = ctx.now;
      withdrawUnclaimed(ctx, step.id, attempt);
    }
    if (attempt || step.status === "retrying") {
      // Any earlier action attempt that started (a silent agent, a timed-out call) may have taken effect.
      const starts = step.attempts.filter((a) => a.kind === "action" && a.startedAt !== undefined).map((a) => a.startedAt ?? 0);
      if (starts.length > 0) started.push({ id: step.id, startedAt: Math.max(...starts) });
    }
    if (attempt || UNSTARTED_OR_TIMED.has(step.status)) {
      step.status = "cancelled";
      delete step.nextRetryAt;
      delete step.timerAt;
      delete step.waitingSince;
      delete step.parked;
      ctx.changed = true;
    }
  }
  return [...maps, ...started.sort((a, b) => b.startedAt - a.startedAt).map((entry) => entry.id)];
}

/** A step's own compensation, or for a map, its items' that may need undoing. */
function hasCompensation(ctx: TransitionContext, id: string): boolean {
  const step = ctx.step(id);
  return step && isMapStep(step) ? mapNeedsUndo(ctx, step) : ctx.plan(id).compensate !== undefined;
}

function mayHaveTakenEffect(step: StepState): boolean {
  return step.attempts.some(endedWithoutAnswer);
}

/** The saga: compensate what may have taken effect, in reverse order of completion, one step at a time. */
export function beginCompensation(ctx: TransitionContext, endStatus: "compensated" | "cancelled"): void {
  const { state } = ctx;
  const interrupted = fenceUnfinishedSteps(ctx);
  // A step that failed for good after an attempt with no clear answer (it timed out, or the request broke
  // off) may have taken effect all the same (an ambiguous outcome): it is undone first, as the newest.
  // A map that failed beyond its tolerance has items that succeeded: they are undone with it.
  const ambiguous = state.steps.filter((step) => step.status === "failed" && (mayHaveTakenEffect(step) || isMapStep(step))).map((step) => step.id);
  const completed = [...state.completionOrder].reverse().filter((id) => ctx.step(id)?.status === "succeeded");
  const queue = [...ambiguous, ...interrupted, ...completed].filter((id) => hasCompensation(ctx, id));
  state.compensation = { queue, endStatus };
  state.status = "compensating";
  ctx.record({ type: "compensation_started", data: { steps: queue, endStatus } });
  advanceCompensation(ctx);
}

/** Starts the next compensation, or ends the workflow when none is left. */
export function advanceCompensation(ctx: TransitionContext): void {
  const { state } = ctx;
  const compensation = state.compensation;
  if (!compensation || state.status !== "compensating") return;
  while (compensation.queue.length > 0) {
    const head = ctx.step(compensation.queue[0] ?? "");
    if (head && isMapStep(head) && head.status !== "compensated") {
      if (advanceMapUndo(ctx, head) === "busy") return;
    }
    if (!head || head.status === "compensated" || head.status === "skipped") {
      compensation.queue.shift();
      continue;
    }
    // A compensation in flight or backing off, or one that failed for good (an operator decides), holds the queue.
    if (head.status === "compensating" || (head.status === "failed" && latestAttempt(head)?.kind === "compensation")) return;
    head.budgetUsed = 0;
    ctx.scheduleAttempt(head, "compensation");
    return;
  }
  state.status = compensation.endStatus;
  state.endedAt = ctx.now;
  ctx.record({ type: compensation.endStatus === "cancelled" ? "workflow_cancelled" : "workflow_compensated" });
}
