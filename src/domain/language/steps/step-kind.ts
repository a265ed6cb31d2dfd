/**
 * What the language says about one kind of step: its piece of a definition, its piece of the plan and of the
 * stored state, and how it reads in a view and a diagnosis. What a kind does when it runs (start, its timer
 * falling due) is its module under machine/steps/, which the compiler asks for once the kind is registered here.
 */
import { z } from "zod";
import type { HttpAction } from "../actions";

/** Fields of a definition's step that any kind may read when it plans, beside its own field. */
export interface CommonStepFields {
  verify?: HttpAction;
  /** The step's own retry policy, as written (a child workflow's failure is retried only when the step has one). */
  retry?: object;
}

/** What the view and the diagnosis read of a step's state, whatever its kind. */
export interface OpenStep {
  status: string;
  /** The kind's own timer (see `StepTimer`), while it is armed. */
  timerAt?: number;
  waitingSince?: number;
}

/**
 * A kind whose open step waits on another party, with no deadline of its own (a child workflow, which has its
 * own): how the diagnosis names what it waits for. The liveness check counts that party as the one it waits on.
 */
export interface StepWait<Plan, Reason extends string> {
  /** The step's status while it waits. */
  readonly status: string;
  /** Why an open step of this kind is blocked, in the diagnosis's words. */
  readonly blockedReason: Reason;
  /** What it waits for, in a sentence. */
  waitsFor(plan: Plan, workflowId: string): string;
  /**
   * The workflow list's one line while a step of this kind waits, for a wait worth an operator's attention (an
   * event someone must send). None for a wait that ends by itself (a sleep) or that has a line of its own (a child).
   */
  attention?(plan: Plan): string;
}

/**
 * A kind that arms a timer (`timerAt`) while its step is open: the supervisor's deadline for it, and how the
 * diagnosis names what the step waits for. Paused workflows hold every kind's timer.
 */
export interface StepTimer<Plan, Deadline extends string, Reason extends string> extends StepWait<Plan, Reason> {
  /** The deadline's name, in the alarm's and the diagnosis's words. */
  readonly deadline: Deadline;
}

export interface StepKindShape<
  K extends string,
  Definition extends z.ZodType,
  Plan extends z.ZodObject,
  State extends z.ZodObject,
  View extends z.ZodRawShape,
  Deadline extends string = never,
  Reason extends string = never,
> {
  /** The kind's name, which is also the definition's field that makes a step this kind. */
  readonly kind: K;
  /** The schema of that field. */
  readonly definition: Definition;
  /** The kind's variant of the plan: `kind` and the fields it runs with. */
  readonly plan: Plan;
  /** The kind's variant of the stored step state: `kind` and any fields of its own. */
  readonly state: State;
  planOf(own: z.output<Definition>, step: CommonStepFields): z.output<Plan>;
  /** A problem only this kind can see in a definition (beyond its schema), said of the step. */
  check?(own: z.output<Definition>, stepId: string): string | undefined;
  /** An inline definition the kind carries (a child workflow's): checked with the definition it is part of. */
  nestedDefinition?(own: z.output<Definition>): unknown;
  readonly timer?: StepTimer<z.output<Plan>, Deadline, Reason>;
  /** For a kind without a timer that waits on another party (see StepWait). */
  readonly waits?: StepWait<z.output<Plan>, Reason>;
  /** The fields it adds to a step's view, and their values for one step. */
  readonly viewFields: View;
  view(step: OpenStep & z.output<State>, plan: z.output<Plan>): Partial<z.output<z.ZodObject<View>>>;
}

/** Declares a kind with its names kept as literal types, so the registry can list its deadline and its reason. */
export function defineStepKind<
  const K extends string,
  Definition extends z.ZodType,
  Plan extends z.ZodObject,
  State extends z.ZodObject,
  View extends z.ZodRawShape,
  const Deadline extends string = never,
  const Reason extends string = never,
>(shape: StepKindShape<K, Definition, Plan, State, View, Deadline, Reason>): StepKindShape<K, Definition, Plan, State, View, Deadline, Reason> {
  return shape;
}

/**
 * The parts of a kind that plans its definition field as written, under the same name, and keeps no state of its
 * own (a sleep, a wait): its definition schema, its plan and state variants, and `planOf`.
 */
export function kindOfOwnField<const K extends string, Definition extends z.ZodType>(kind: K, definition: Definition) {
  const own = { [kind]: definition } as { [P in K]: Definition };
  return {
    kind,
    definition,
    plan: z.object({ kind: z.literal(kind), ...own }),
    state: z.object({ kind: z.literal(kind) }),
    planOf: (field: z.output<Definition>) => ({ kind, [kind]: field }) as { kind: K } & { [P in K]: z.output<Definition> },
  };
}
