/** A map step's progress and its item step's plan: the small reads every map module makes. */
import type { StepPlanOf } from "../../language/plan";
import type { MapProgress } from "../../language/steps";
import { mapItemOf } from "../../language/plan";
import type { StepState } from "../state";
import type { TransitionContext } from "../context";

export type MapStep = StepState & { kind: "map"; items?: MapProgress };

export function isMapStep(step: StepState): step is MapStep {
  return step.kind === "map";
}

export function mapPlanOf(ctx: TransitionContext, mapId: string): StepPlanOf<"map">["map"] {
  const plan = ctx.plan(mapId);
  if (plan.kind !== "map") throw new Error(`step ${mapId} is not a map`);
  return plan.map;
}

/** Whether items remain that have not started (fresh ones, or ones a redrive runs again). */
export function hasUnstarted(progress: MapProgress): boolean {
  return progress.next < progress.total || (progress.redo?.length ?? 0) > 0;
}

/** More items failed for good than the map tolerates. */
export function beyondTolerance(map: StepPlanOf<"map">["map"], progress: MapProgress): boolean {
  if (map.toleratedFailurePercent !== undefined) return progress.failed * 100 > map.toleratedFailurePercent * progress.total;
  return progress.failed > (map.toleratedFailures ?? 0);
}

/** The map's items that are steps in the state now: those in flight, or (while it is undone) the one being undone. */
export function itemStepsOf(ctx: TransitionContext, mapId: string): StepState[] {
  return ctx.state.steps.filter((step) => mapItemOf(step.id)?.map === mapId);
}
