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
        endedAt: z.number().optional().openapi({ description: "When it ended (epoch ms); absent while it is open" }),
        parentId: z.string().optional().openapi({ description: "The workflow whose step started it (a child workflow)" }),
        startAt: z.number().optional().openapi({ description: "A delayed start's time (epoch ms): a `scheduled` workflow starts then" }),
        summary: z.string().optional().openapi({
          description:
            "Why an open workflow is worth a look, in one line (the diagnosis' words): `retrying notify 6/8 after 503`, `waiting for event approved`, `needs attention: charge failed (422)`, `paused`, `circuit open for api.example`, `waiting for a worker in pool gpu`, `start deferred: the task queue is behind`. Absent for one that is simply running, and once it has ended",
          example: "retrying notify 6/8 after 503",
        }),
        stepId: z.string().optional().openapi({ description: "The step the summary is about" }),
        attempts: z
          .object({ used: z.number(), max: z.number() })
          .optional()
          .openapi({ description: "That step's attempts: `used` counts the one the summary is about (a retry waiting out its backoff too), `max` is its retry policy's maxAttempts" }),
        nextDeadlineAt: z.number().optional().openapi({ description: "When the supervisor next acts on what the summary names (epoch ms): the retry, the wait's timeout, the escalation's default; as of the summary" }),
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
