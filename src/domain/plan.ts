import { z } from "zod";
import { dependenciesOf } from "./definition";
import { ResolvedRetryPolicySchema, resolveRetryPolicy, ResolvedTimeoutsSchema, resolveTimeouts } from "./retry-policy";
import { ActionSchema, ON_FAILURE, type DefinitionInput } from "./schemas";

/** A step with every default applied and its dependencies made explicit: what the scheduler runs. */
export const StepPlanSchema = z.object({
  id: z.string(),
  dependsOn: z.array(z.string()),
  action: ActionSchema,
  compensate: ActionSchema.optional(),
  retry: ResolvedRetryPolicySchema,
  timeouts: ResolvedTimeoutsSchema,
});

export const WorkflowPlanSchema = z.object({
  name: z.string(),
  onFailure: z.enum(ON_FAILURE),
  timeoutMs: z.number().optional(),
  steps: z.array(StepPlanSchema),
});

export type StepPlan = z.infer<typeof StepPlanSchema>;
export type WorkflowPlan = z.infer<typeof WorkflowPlanSchema>;

/** A checked definition with every default applied: what the scheduler stores and runs. */
export function planWorkflow(definition: DefinitionInput): WorkflowPlan {
  return {
    name: definition.name,
    onFailure: definition.onFailure ?? "compensate",
    ...(definition.timeoutMs === undefined ? {} : { timeoutMs: definition.timeoutMs }),
    steps: definition.steps.map((step, index) => ({
      id: step.id,
      dependsOn: dependenciesOf(definition, index),
      action: step.action,
      ...(step.compensate ? { compensate: step.compensate } : {}),
      retry: resolveRetryPolicy(definition.defaults?.retry, step.retry),
      timeouts: resolveTimeouts(definition.defaults?.timeouts, step.timeouts),
    })),
  };
}
