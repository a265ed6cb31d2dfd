import { z } from "zod";
import { ResolvedBreakerSchema, resolveBreaker } from "../breaker/settings";
import { dependenciesOf } from "./definition";
import { ResolvedRetryPolicySchema, resolveRetryPolicy, ResolvedTimeoutsSchema, resolveTimeouts } from "./retry-policy";
import { ActionSchema } from "./actions";
import { ESCALATION_DEFAULTS, ON_FAILURE, type DefinitionInput, type ItemStepInput } from "./schemas";
import { KindPlanSchema, planKindOf, withPlanKind, type StepKindName } from "./steps";

/** What every step's plan has, whatever its kind. */
const CommonStepPlanSchema = z.object({
  id: z.string(),
  dependsOn: z.array(z.string()),
  when: z.string().optional(),
  compensate: ActionSchema.optional(),
  retry: ResolvedRetryPolicySchema,
  timeouts: ResolvedTimeoutsSchema,
  /** Absent when the definition sets none: the claim applies DEFAULT_BREAKER (plans stored before it have none). */
  breaker: ResolvedBreakerSchema.optional(),
  /** The step's own priority for its worker tasks, when it sets one (else the workflow's). */
  priority: z.number().optional(),
});

/**
 * A step with every default applied and its dependencies made explicit: what the scheduler runs. Its `kind` tells
 * which fields of its own it has (see steps/); a plan stored before there was `kind` gets it from those fields.
 */
export const StepPlanSchema = z.preprocess(withPlanKind, z.intersection(CommonStepPlanSchema, KindPlanSchema));

export const WorkflowPlanSchema = z.object({
  name: z.string(),
  onFailure: z.enum(ON_FAILURE),
  /** With `onFailure: "escalate"`: how long the workflow waits on an operator, and what runs then. */
  escalation: z.object({ afterMs: z.number(), then: z.enum(ESCALATION_DEFAULTS) }).optional(),
  timeoutMs: z.number().optional(),
  steps: z.array(StepPlanSchema),
  /** Each map's item step, planned as a step of its own under the map's id (absent: no map). */
  itemSteps: z.record(z.string(), StepPlanSchema).optional(),
});

export type StepPlan = z.infer<typeof StepPlanSchema>;
export type WorkflowPlan = z.infer<typeof WorkflowPlanSchema>;

/** A checked definition with every default applied: what the scheduler stores and runs. */
export function planWorkflow(definition: DefinitionInput, options: { mapMaxItems?: number } = {}): WorkflowPlan {
  const itemSteps = Object.fromEntries(
    definition.steps.flatMap((step) => (step.map ? [[step.id, planStep(definition, { ...(step.map.step as ItemStepInput), id: step.id }, [])]] : [])),
  );
  return {
    name: definition.name,
    ...onFailureOf(definition),
    ...(definition.timeoutMs === undefined ? {} : { timeoutMs: definition.timeoutMs }),
    steps: definition.steps.map((step, index) => withMapLimit(planStep(definition, step, dependenciesOf(definition, index)), options.mapMaxItems)),
    ...(Object.keys(itemSteps).length === 0 ? {} : { itemSteps }),
  };
}

/** A map planned under a deployment's own item limit keeps it, so a later change of the setting changes nothing. */
function withMapLimit(step: StepPlan, maxItems: number | undefined): StepPlan {
  return step.kind === "map" && maxItems !== undefined ? { ...step, map: { ...step.map, maxItems } } : step;
}

/** One step (or a map's item step) with the definition's defaults applied. */
function planStep(definition: DefinitionInput, step: ItemStepInput & { id: string; when?: string }, dependsOn: string[]): StepPlan {
  return {
    id: step.id,
    dependsOn,
    ...(step.when === undefined ? {} : { when: step.when }),
    ...planKindOf(step),
    ...(step.compensate ? { compensate: step.compensate } : {}),
    retry: resolveRetryPolicy(definition.defaults?.retry, step.retry),
    timeouts: resolveTimeouts(definition.defaults?.timeouts, step.timeouts),
    ...breakerOf(definition.defaults?.breaker, step.breaker),
    ...(step.priority === undefined ? {} : { priority: step.priority }),
  };
}

/** The definition's `onFailure`, with an escalation's deadline apart so the machine can keep switching on one word. */
function onFailureOf(definition: DefinitionInput): Pick<WorkflowPlan, "onFailure" | "escalation"> {
  const onFailure = definition.onFailure ?? "compensate";
  return typeof onFailure === "string" ? { onFailure } : { onFailure: "escalate", escalation: onFailure.escalate };
}

function breakerOf(...layers: Parameters<typeof resolveBreaker>): Pick<StepPlan, "breaker"> {
  const breaker = resolveBreaker(...layers);
  return breaker ? { breaker } : {};
}

/** The plan of one step, looked up by its id; undefined only for a step the plan does not have. */
export function findStepPlan(plan: WorkflowPlan, stepId: string): StepPlan | undefined {
  const item = mapItemOf(stepId);
  if (!item) return plan.steps.find((step) => step.id === stepId);
  const itemPlan = plan.itemSteps?.[item.map];
  return itemPlan && { ...itemPlan, id: stepId };
}

/**
 * A map's item in flight is a step of its own while it runs, under the id `<mapStepId>#<index>` (`#` is not
 * allowed in a step id, so no step of the definition can have such an id).
 */
export function mapItemStepId(map: string, index: number): string {
  return `${map}#${index}`;
}

/** The map and the index of an item's step id; undefined for any other step. */
export function mapItemOf(stepId: string): { map: string; index: number } | undefined {
  const at = stepId.lastIndexOf("#");
  if (at < 0) return undefined;
  return { map: stepId.slice(0, at), index: Number(stepId.slice(at + 1)) };
}

/** The plan of a step of one kind. */
export type StepPlanOf<K extends StepKindName> = Extract<StepPlan, { kind: K }>;
