/**
 * A map runs its items `maxConcurrency` at a time. An item in flight is a step of its own in the workflow's state
 * (`<mapId>#<index>`), so attempts, retries, deadlines, heartbeats, parking and every kind work for it as for any
 * step, and the supervisor's tick sees only the items in flight, never all of them. An item that ended leaves the
 * state for its row (item-rows.ts), and the next item takes its place.
 */
import { mapItemOf, mapItemStepId } from "../../language/plan";
import { MAX_MAP_ITEMS } from "../../language/steps";
import type { StepState } from "../state";
import type { TransitionContext } from "../context";
import { failStepOutright } from "../failure";
import { completeStep } from "../steps/outcome";
import type { MapItemRow } from "./item-rows";
import { beyondTolerance, hasUnstarted, isMapStep, itemStepsOf, mapPlanOf, type MapStep } from "./progress";
import { mapOutput } from "./output";
import { stopItemsInFlight } from "./stop";

/** Starts a ready map; a map that ran before (a redrive, an operator's retry) runs again only what did not succeed. */
export function startMap(ctx: TransitionContext, step: MapStep): void {
  const items = ctx.mapItems(step.id);
  if (typeof items === "string") return failStepOutright(ctx, step, { message: items, retryable: false });
  const limit = mapPlanOf(ctx, step.id).maxItems ?? MAX_MAP_ITEMS;
  if (items.length > limit) {
    return failStepOutright(ctx, step, { message: `map.items has ${items.length} items; a map takes at most ${limit} (MAP_MAX_ITEMS)`, retryable: false });
  }
  const before = step.items;
  if (before) {
    const redo = ctx.items.notSucceeded(step.id, before.total);
    for (const index of redo) ctx.items.write({ stepId: step.id, index, status: "pending", attempt: ctx.items.get(step.id, index)?.attempt ?? 0 });
    step.items = { ...before, next: before.total, running: 0, succeeded: before.total - redo.length, failed: 0, skipped: 0, redo };
  } else {
    step.items = { total: items.length, next: 0, running: 0, succeeded: 0, failed: 0, skipped: 0 };
    ctx.items.pending.push({ stepId: step.id, total: items.length });
  }
  step.status = "running";
  const { maxConcurrency } = mapPlanOf(ctx, step.id);
  ctx.record({ type: "map_started", stepId: step.id, data: { total: items.length, maxConcurrency, ...(before ? { again: step.items.redo?.length ?? 0 } : {}) } });
  fillWindow(ctx, step);
}

/**
 * Settles every running map after a change: items that ended give their rows their outcome and leave the state,
 * the next items join it as pending steps (dispatch starts them, as any ready step), and a map whose last item
 * ended succeeds or fails. Whether anything moved, so dispatch goes round again for items that end as they start.
 */
export function settleMaps(ctx: TransitionContext): boolean {
  let moved = false;
  for (const step of [...ctx.state.steps]) {
    if (isMapStep(step) && step.status === "running" && step.items) moved = fillWindow(ctx, step) || moved;
  }
  return moved;
}

function fillWindow(ctx: TransitionContext, step: MapStep): boolean {
  const progress = step.items!;
  let moved = settleEndedItems(ctx, step);
  if (step.status !== "running") return true;
  // The items in flight are the steps in the state: counted from there, so the count cannot drift from them.
  progress.running = itemStepsOf(ctx, step.id).length;
  const plan = mapPlanOf(ctx, step.id);
  while (mayStartItems(ctx) && progress.running < plan.maxConcurrency && hasUnstarted(progress)) {
    const index = progress.redo?.length ? progress.redo.shift() : progress.next++;
    if (progress.redo?.length === 0) delete progress.redo;
    addItem(ctx, step, index ?? 0);
    moved = true;
  }
  if (progress.running > 0 || hasUnstarted(progress)) return moved;
  completeStep(ctx, step, mapOutput(ctx, step.id, progress.total));
  return true;
}

/** A paused or unwinding workflow starts no item; items in flight go on. */
function mayStartItems(ctx: TransitionContext): boolean {
  return ctx.state.status === "running" || ctx.state.status === "needs_attention";
}

/** An item joins the state as a pending step of the map's item kind. */
function addItem(ctx: TransitionContext, map: MapStep, index: number): void {
  const row = ctx.items.get(map.id, index);
  const plan = ctx.plan(mapItemStepId(map.id, index));
  // Attempt numbers run on from an earlier run of the item, so a report from then is still refused as stale; an
  // item whose effect was undone asks the remote for new work under a new key, as a redriven step does.
  const item: StepState = { id: plan.id, kind: plan.kind, status: "pending", attempt: row?.attempt ?? 0, budgetUsed: 0, attempts: [] } as StepState;
  if (row?.status === "compensated") item.keyRound = ctx.state.redriveCount ?? 1;
  ctx.state.steps.push(item);
  map.items!.running += 1;
  ctx.items.write({ stepId: map.id, index, status: "running", attempt: item.attempt });
  ctx.changed = true;
}

const ITEM_OUTCOMES = new Set(["succeeded", "failed", "skipped"]);

/** Items of this map that ended since the last look: each gives its row its outcome and leaves the state. */
function settleEndedItems(ctx: TransitionContext, map: MapStep): boolean {
  const progress = map.items!;
  const ended = itemStepsOf(ctx, map.id).filter((step) => ITEM_OUTCOMES.has(step.status) && step.attempts.at(-1)?.kind !== "compensation");
  for (const item of ended) {
    ctx.state.steps.splice(ctx.state.steps.indexOf(item), 1);
    ctx.changed = true;
    const index = mapItemOf(item.id)!.index;
    progress.seq = (progress.seq ?? 0) + 1;
    const status = item.status as "succeeded" | "failed" | "skipped";
    progress[status] += 1;
    const row: MapItemRow = { stepId: map.id, index, status, attempt: item.attempt, endedSeq: progress.seq };
    if (status === "succeeded") row.output = item.output ?? null;
    if (item.error && status === "failed") row.error = item.error;
    ctx.items.write(row);
    ctx.changed = true;
    if (status === "failed" && beyondTolerance(mapPlanOf(ctx, map.id), progress)) {
      failMap(ctx, map, row);
      return true;
    }
  }
  return ended.length > 0;
}

/** More items failed than tolerated: the items in flight are stopped, and the map fails as any step does. */
function failMap(ctx: TransitionContext, map: MapStep, failed: MapItemRow): void {
  const progress = map.items!;
  const message = `${progress.failed} of ${progress.total} items failed for good; item ${failed.index}: ${failed.error?.message ?? "failed"}`;
  stopItemsInFlight(ctx, map);
  failStepOutright(ctx, map, { message, retryable: false });
}
