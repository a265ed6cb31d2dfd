import { z } from "@hono/zod-openapi";
import { IdSchema } from "../domain/language/schemas";
import { StartWorkflowSchema } from "../domain/language/definition";
import { WORKFLOW_STATUSES } from "../domain/machine/state";
import { WorkflowViewSchema as DomainWorkflowViewSchema } from "../domain/machine/view";

/** Response shapes, declared for the OpenAPI document (requests reuse the domain's schemas). */
export const WorkflowViewSchema = DomainWorkflowViewSchema.openapi("Workflow");

/** The start body, named in the document: `POST /v1/workflows` takes it, and each item of a batch is one. */
export const StartWorkflowBodySchema = StartWorkflowSchema.openapi("StartWorkflow");
export const START_WORKFLOW_REF = "#/components/schemas/StartWorkflow";

export const HistoryEventSchema = z.object({
  seq: z.number(),
  at: z.number(),
  type: z.string(),
  stepId: z.string().optional(),
  attempt: z.number().optional(),
  data: z.unknown().optional(),
});

export const HistorySchema = z
  .object({
    events: z.array(
      HistoryEventSchema,
    ),
    nextAfter: z.number().optional(),
  })
  .openapi("History");

export const WorkflowListSchema = z
  .object({
    workflows: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        status: z.enum(WORKFLOW_STATUSES),
        createdAt: z.number(),
        updatedAt: z.number().openapi({ description: "When the workflow last changed status" }),
        parentId: z.string().optional().openapi({ description: "The workflow whose step started it (a child workflow)" }),
        startAt: z.number().optional().openapi({ description: "A delayed start's time (epoch ms): a `scheduled` workflow starts then" }),
      }),
    ),
    nextCursor: z.string().optional(),
  })
  .openapi("WorkflowList");

export const WorkflowParamsSchema = z.object({ id: IdSchema.openapi({ param: { name: "id", in: "path" } }) });
export const StepParamsSchema = z.object({
  id: IdSchema.openapi({ param: { name: "id", in: "path" } }),
  stepId: IdSchema.openapi({ param: { name: "stepId", in: "path" } }),
});
export const TaskParamsSchema = z.object({
  token: z.string().min(1).max(2048).openapi({ param: { name: "token", in: "path" } }),
});
