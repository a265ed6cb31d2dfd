import { mapItemOf } from "../../language/plan";
import { ACTIVE_ATTEMPT_STATUSES } from "../state";
import type { TransitionContext } from "../context";
import { itemStepsOf, type MapStep } from "./progress";
import { withdrawUnclaimed } from "../pool-offers";

/**
 * Stops a map's items in flight (its map failed, or the workflow unwinds or ends): their attempts are fenced and
 * their rows say `cancelled`, with whether an attempt had started (its effect may have happened: undo covers it).
 */
export function stopItemsInFlight(ctx: TransitionContext, map: MapStep): void {
  const progress = map.items;
  if (!progress) return;
  for (const item of itemStepsOf(ctx, map.id)) {
    const active = item.attempts.at(-1);
    if (active && ACTIVE_ATTEMPT_STATUSES.includes(active.status)) {
      active.status = "cancelled";
      active.endedAt = ctx.now;
      withdrawUnclaimed(ctx, item.id, active);
    }
    const started = item.attempts.some((attempt) => attempt.kind === "action" && attempt.startedAt !== undefined);
    progress.seq = (progress.seq ?? 0) + 1;
    ctx.items.write({ stepId: map.id, index: mapItemOf(item.id)!.index, status: "cancelled", attempt: item.attempt, endedSeq: progress.seq, ...(started ? { mayHaveEffect: true } : {}) });
    ctx.state.steps.splice(ctx.state.steps.indexOf(item), 1);
  }
  progress.running = 0;
  ctx.changed = true;
}
