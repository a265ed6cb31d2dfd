import { z } from "zod";
import { ResolvedBreakerSchema, resolveBreaker } from "./breaker-settings";
import { dependenciesOf } from "./definition";
import { ResolvedRetryPolicySchema, resolveRetryPolicy, ResolvedTimeoutsSchema, resolveTimeouts } from "./retry-policy";
import { ActionSchema, ESCALATION_DEFAULTS, ON_FAILURE, SleepSchema, WaitForEventSchema, type DefinitionInput, type StepKind } from "./schemas";

/** A step with every default applied and its dependencies made explicit: what the scheduler runs. */
export const StepPlanSchema = z.object({
  id: z.string(),
  dependsOn: z.array(z.string()),
  when: z.string().optional(),
  /** Exactly one of the three kinds (plans stored before v1.1 always have `action`). */
  action: ActionSchema.optional(),
  sleep: SleepSchema.optional(),
  waitForEvent: WaitForEventSchema.optional(),
  compensate: ActionSchema.optional(),
  verify: ActionSchema.optional(),
  retry: ResolvedRetryPolicySchema,
  timeouts: ResolvedTimeoutsSchema,
  /** Absent when the definition sets none: the claim applies DEFAULT_BREAKER (plans stored before it have none). */
  breaker: ResolvedBreakerSchema.optional(),
});

export const WorkflowPlanSchema = z.object({
  name: z.string(),
  onFailure: z.enum(ON_FAILURE),
  /** With `onFailure: "escalate"`: how long the workflow waits on an operator, and what runs then. */
  escalation: z.object({ afterMs: z.number(), then: z.enum(ESCALATION_DEFAULTS) }).optional(),
  timeoutMs: z.number().optional(),
  steps: z.array(StepPlanSchema),
});

export type StepPlan = z.infer<typeof StepPlanSchema>;
export type WorkflowPlan = z.infer<typeof WorkflowPlanSchema>;

/** A checked definition with every default applied: what the scheduler stores and runs. */
export function planWorkflow(definition: DefinitionInput): WorkflowPlan {
  return {
    name: definition.name,
    ...onFailureOf(definition),
    ...(definition.timeoutMs === undefined ? {} : { timeoutMs: definition.timeoutMs }),
    steps: definition.steps.map((step, index) => ({
      id: step.id,
      dependsOn: dependenciesOf(definition, index),
      ...(step.when === undefined ? {} : { when: step.when }),
      ...(step.action ? { action: step.action } : {}),
      ...(step.sleep ? { sleep: step.sleep } : {}),
      ...(step.waitForEvent ? { waitForEvent: step.waitForEvent } : {}),
      ...(step.compensate ? { compensate: step.compensate } : {}),
      ...(step.verify ? { verify: step.verify } : {}),
      retry: resolveRetryPolicy(definition.defaults?.retry, step.retry),
      timeouts: resolveTimeouts(definition.defaults?.timeouts, step.timeouts),
      ...breakerOf(definition.defaults?.breaker, step.breaker),
    })),
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
  return plan.steps.find((step) => step.id === stepId);
}

/** What kind of step a plan runs; the definition check guarantees exactly one. */
export function stepKind(step: StepPlan): StepKind {
  if (step.sleep) return "sleep";
  if (step.waitForEvent) return "waitForEvent";
  return "action";
}
