/**
 * Undoing a map: its items' compensations, newest item first, one at a time like the rest of the saga. The item
 * being undone is a step in the state again (`<mapId>#<index>`, its output from its row) for as long as its
 * compensation runs; the rows say which items are left.
 */
import { mapItemOf, mapItemStepId } from "../../language/plan";
import type { StepState } from "../state";
import type { TransitionContext } from "../context";
import { isMapStep, itemStepsOf, type MapStep } from "./progress";
import { stopItemsInFlight } from "./stop";

/** Stops every running map's items in flight; the maps whose items may need undoing are returned. */
export function fenceMaps(ctx: TransitionContext): string[] {
  const fenced: string[] = [];
  for (const step of ctx.state.steps) {
    if (!isMapStep(step) || !["running", "pending"].includes(step.status) || !step.items) continue;
    stopItemsInFlight(ctx, step);
    step.status = "cancelled";
    fenced.push(step.id);
  }
  return fenced;
}

/** Whether a map has items whose effect may need undoing, and an item step with a compensation to undo them. */
export function mapNeedsUndo(ctx: TransitionContext, step: StepState): boolean {
  if (!isMapStep(step) || !step.items || ctx.state.plan.itemSteps?.[step.id]?.compensate === undefined) return false;
  return ctx.items.toUndo(step.id, 1).length > 0;
}

/**
 * The saga reached a map: undo its next item, or say the map is done. "busy" while an item's compensation is in
 * flight, backing off, or failed for good (an operator decides, as for any step's compensation).
 */
export function advanceMapUndo(ctx: TransitionContext, map: MapStep): "busy" | "done" {
  const [current] = itemStepsOf(ctx, map.id);
  if (current) {
    if (current.status !== "compensated") return "busy";
    const index = mapItemOf(current.id)!.index;
    const row = ctx.items.get(map.id, index);
    ctx.items.write({ stepId: map.id, index, status: "compensated", attempt: current.attempt, ...(row?.endedSeq === undefined ? {} : { endedSeq: row.endedSeq }) });
    ctx.state.steps.splice(ctx.state.steps.indexOf(current), 1);
  }
  const [next] = mapNeedsUndo(ctx, map) ? ctx.items.toUndo(map.id, 1) : [];
  if (next === undefined) {
    map.status = "compensated";
    ctx.changed = true;
    return "done";
  }
  const row = ctx.items.get(map.id, next);
  const plan = ctx.plan(mapItemStepId(map.id, next));
  const item = { id: plan.id, kind: plan.kind, status: "succeeded", attempt: row?.attempt ?? 0, budgetUsed: 0, attempts: [], output: row?.output ?? null } as StepState;
  ctx.state.steps.push(item);
  map.status = "compensating";
  ctx.scheduleAttempt(item, "compensation");
  return "busy";
}
