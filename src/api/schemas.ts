import { z } from "@hono/zod-openapi";
import { IdSchema } from "../domain/schemas";

/** Response shapes, declared for the OpenAPI document (requests reuse the domain's schemas). */
const StepErrorSchema = z.object({
  message: z.string(),
  retryable: z.boolean().optional(),
  status: z.number().optional(),
  timeout: z.string().optional(),
});

const AttemptSchema = z.object({
  n: z.number(),
  kind: z.enum(["action", "compensation"]),
  status: z.enum(["scheduled", "running", "waiting", "succeeded", "failed", "timed_out", "cancelled"]),
  scheduledAt: z.number(),
  startedAt: z.number().optional(),
  endedAt: z.number().optional(),
  error: StepErrorSchema.optional(),
});

const StepViewSchema = z.object({
  id: z.string(),
  status: z.enum(["pending", "scheduled", "running", "waiting", "retrying", "succeeded", "failed", "skipped", "compensating", "compensated", "cancelled"]),
  attempt: z.number(),
  output: z.unknown().optional(),
  error: StepErrorSchema.optional(),
  nextRetryAt: z.number().optional(),
  lastHeartbeatAt: z.number().optional(),
  progress: z.unknown().optional(),
  attempts: z.array(AttemptSchema),
});

export const WorkflowViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(["running", "compensating", "needs_attention", "completed", "failed", "compensated", "cancelled"]),
    input: z.unknown(),
    output: z.record(z.string(), z.unknown()).optional(),
    error: StepErrorSchema.optional(),
    createdAt: z.number(),
    updatedAt: z.number(),
    endedAt: z.number().optional(),
    steps: z.array(StepViewSchema),
  })
  .openapi("Workflow");

export const HistorySchema = z
  .object({
    events: z.array(
      z.object({
        seq: z.number(),
        at: z.number(),
        type: z.string(),
        stepId: z.string().optional(),
        attempt: z.number().optional(),
        data: z.unknown().optional(),
      }),
    ),
  })
  .openapi("History");

export const WorkflowParamsSchema = z.object({ id: IdSchema.openapi({ param: { name: "id", in: "path" } }) });
export const StepParamsSchema = z.object({
  id: IdSchema.openapi({ param: { name: "id", in: "path" } }),
  stepId: IdSchema.openapi({ param: { name: "stepId", in: "path" } }),
});
export const TaskParamsSchema = z.object({
  token: z.string().min(1).max(2048).openapi({ param: { name: "token", in: "path" } }),
});
