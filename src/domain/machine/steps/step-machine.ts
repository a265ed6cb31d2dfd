/**
 * What one step kind does when it runs: how it starts, and what happens when its timer falls due. The language's
 * side of the kind (its schema, plan, view and diagnosis words) is its module under steps/.
 */
import type { StepPlanOf } from "../../language/plan";
import type { StepState } from "../state";
import type { StepKindName, TimerDeadlineOf } from "../../language/steps";
import type { TransitionContext } from "../context";

interface StepStart<K extends StepKindName> {
  /** Starts a step that is ready (its dependencies done, its `when` held), or one an operator retries. */
  start(ctx: TransitionContext, step: StepState, plan: StepPlanOf<K>): void;
}

interface StepTimerDue<K extends StepKindName> {
  /** Its timer (`timerAt`) passed: the supervisor's tick hands the step back to its kind. */
  timerDue(ctx: TransitionContext, step: StepState, plan: StepPlanOf<K>): void;
}

/** A kind that arms a timer (see `StepTimer` in steps/) must say what happens when it falls due. */
export type StepMachine<K extends StepKindName> = StepStart<K> & ([TimerDeadlineOf<K>] extends [never] ? Partial<StepTimerDue<K>> : StepTimerDue<K>);
