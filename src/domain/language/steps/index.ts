/**
 * The step kinds, in one list. A kind added here is part of the definition, the plan, the stored state, the view
 * and the diagnosis at once, and the compiler then asks for its machine (machine/steps/index.ts).
 */
import { z } from "zod";
import { actionStep } from "./action";
import { mapStep } from "./map";
import { sleepStep } from "./sleep";
import type { CommonStepFields, OpenStep, StepKindShape, StepTimer } from "./step-kind";
import { waitForEventStep } from "./wait-for-event";
import { workflowStep } from "./workflow";

export const STEP_KINDS = byOwnName({
  action: actionStep,
  sleep: sleepStep,
  waitForEvent: waitForEventStep,
  map: mapStep,
  workflow: workflowStep,
});

/** Each kind under its own name: the name is the definition's field and the plan's `kind`, so they must agree. */
function byOwnName<T extends { [K in keyof T]: { kind: K } }>(kinds: T): T {
  return kinds;
}

type Kinds = typeof STEP_KINDS;
export type StepKindName = keyof Kinds;
/** Any one kind, seen through what every kind has (its methods take their own kind's plan). */
type AnyStepKind = StepKindShape<StepKindName, z.ZodType, z.ZodObject, z.ZodObject<{ kind: z.ZodType<string> }>, z.ZodRawShape, StepTimerDeadline, StepBlockedReason>;
type OfEveryKind<T> = { [K in StepKindName]: T extends "plan" ? Kinds[K]["plan"] : Kinds[K]["state"] }[StepKindName];
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type TimerOf<T> = T extends { timer?: StepTimer<never, infer D, infer R> } ? { deadline: D; reason: R } : never;

export const STEP_KIND_NAMES = Object.keys(STEP_KINDS) as [StepKindName, ...StepKindName[]];

/** The kind of that name, for code that holds a kind only as a name (a plan's, a definition's field). */
export function stepKindOf(kind: StepKindName): AnyStepKind {
  return STEP_KINDS[kind];
}

/** The kind's fields in a definition's step, each optional: `checkDefinition` wants exactly one. */
export const STEP_KIND_FIELDS = Object.fromEntries(STEP_KIND_NAMES.map((kind) => [kind, STEP_KINDS[kind].definition.optional()])) as {
  [K in StepKindName]: z.ZodOptional<Kinds[K]["definition"]>;
};

/** The kind-specific part of a step's plan and of its state: unions told apart by `kind`. */
export const KindPlanSchema = z.discriminatedUnion("kind", STEP_KIND_NAMES.map((kind) => STEP_KINDS[kind].plan) as [OfEveryKind<"plan">, ...OfEveryKind<"plan">[]]);
export const KindStateSchema = z.discriminatedUnion("kind", STEP_KIND_NAMES.map((kind) => STEP_KINDS[kind].state) as [OfEveryKind<"state">, ...OfEveryKind<"state">[]]);
export type KindPlan = z.output<typeof KindPlanSchema>;

/** The fields every kind adds to a step's view. */
export const STEP_VIEW_FIELDS = Object.assign({}, ...STEP_KIND_NAMES.map((kind) => STEP_KINDS[kind].viewFields)) as Intersection<Kinds[StepKindName]["viewFields"]>;

/** The deadlines of the kinds' timers, and why a step of such a kind is blocked, in the supervisor's words. */
export type StepTimerDeadline = TimerOf<Kinds[StepKindName]>["deadline"];
/** The deadline of one kind's timer; never for a kind without one. */
export type TimerDeadlineOf<K extends StepKindName> = TimerOf<Kinds[K]>["deadline"];
export type StepBlockedReason = TimerOf<Kinds[StepKindName]>["reason"];
const TIMERS = STEP_KIND_NAMES.flatMap((kind) => {
  const { timer } = stepKindOf(kind);
  return timer ? [timer] : [];
});
const WAITS = STEP_KIND_NAMES.flatMap((kind) => {
  const { waits } = stepKindOf(kind);
  return waits ? [waits] : [];
});
export const STEP_TIMER_DEADLINES = TIMERS.map((timer) => timer.deadline);
export const STEP_BLOCKED_REASONS = [...TIMERS, ...WAITS].map((words) => words.blockedReason);
/** Reasons of steps that wait on another party with no deadline of their own (see StepWait). */
export const STEP_WAIT_REASONS: readonly StepBlockedReason[] = WAITS.map((wait) => wait.blockedReason);

/** The kinds a definition's step has fields of: exactly one in a checked definition. */
export function kindsOfStep(step: Partial<Record<StepKindName, unknown>>): StepKindName[] {
  return STEP_KIND_NAMES.filter((kind) => step[kind] !== undefined);
}

/** A checked definition step's kind-specific plan. */
export function planKindOf(step: Partial<Record<StepKindName, unknown>> & CommonStepFields): KindPlan {
  const [kind = "action"] = kindsOfStep(step);
  return stepKindOf(kind).planOf(step[kind], step) as KindPlan;
}

/**
 * Plans stored before the plan had `kind` have exactly one kind's field (the definition check saw to it): that
 * field names the kind, so those rows load as the tagged union too.
 */
export function withPlanKind(row: unknown): unknown {
  if (typeof row !== "object" || row === null || "kind" in row) return row;
  const [kind = "action"] = kindsOfStep(row as Partial<Record<StepKindName, unknown>>);
  return { ...row, kind };
}

/** A step's view fields of its kind. */
export function kindViewOf(step: OpenStep & { kind: StepKindName }, plan: KindPlan): Record<string, unknown> {
  return stepKindOf(plan.kind).view(step, plan);
}

export type { CommonStepFields, OpenStep, StepKindShape, StepTimer } from "./step-kind";
export { SleepSchema, type Sleep } from "./sleep";
export { MapSchema, MAX_MAP_ITEMS, MAP_ITEMS_CEILING, itemCounts, type MapProgress, type MapItemCounts } from "./map";
export { WaitForEventSchema, WAIT_TIMEOUT_OUTCOMES, type WaitForEvent } from "./wait-for-event";
export { ChildWorkflowSchema, MAX_WORKFLOW_DEPTH, ON_PARENT_CLOSE, type ChildRef, type ChildWorkflow, type OnParentClose } from "./workflow";
