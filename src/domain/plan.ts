import { z } from "zod";
import { ResolvedRetryPolicySchema, ResolvedTimeoutsSchema } from "./retry-policy";
import { ActionSchema, ON_FAILURE } from "./schemas";

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
