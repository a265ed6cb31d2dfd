import { startMap } from "../map/window";
import { isMapStep } from "../map/progress";
import type { StepMachine } from "./step-machine";

/** A map starts its items, `maxConcurrency` at a time (map/window.ts); it has no attempt or timer of its own. */
export const mapMachine: StepMachine<"map"> = {
  start: (ctx, step) => {
    if (isMapStep(step)) startMap(ctx, step);
  },
};
