import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { startWorkflowBatch, type BatchItemOutcome } from "../admission/start-batch";
import { MAX_BATCH_STARTS } from "../domain/contract";
import type { AppEnv } from "./app-env";
import { errorAnswer, ErrorSchema, rejectionToError } from "./errors";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";
import { START_WORKFLOW_REF, WorkflowViewSchema } from "./schemas";

/**
 * An item is any JSON here: each is checked on its own as a start body, so a bad one is its own 400 in `results`
 * and refuses no other. The document still shows what an item is: the start body of `POST /v1/workflows`.
 */
const BatchItemSchema = z.unknown().openapi({
  description: "A start body, exactly as POST /v1/workflows takes it; checked on its own",
  allOf: [{ $ref: START_WORKFLOW_REF }],
});

const StartBatchSchema = z
  .strictObject({
    workflows: z
      .array(BatchItemSchema)
      .min(1, "give at least one start")
      .max(MAX_BATCH_STARTS, `at most ${MAX_BATCH_STARTS} starts per batch`)
      .openapi({ description: `The starts, 1 to ${MAX_BATCH_STARTS}, answered in this order` }),
  })
  .openapi("StartBatch");

const BatchResultSchema = z.object({
  index: z.number().int().openapi({ description: "The item's position in `workflows`" }),
  status: z.number().int().openapi({ description: "201 started, 200 already started with this same body, else what the start alone would have answered (400, 404, 409, 503 …)" }),
  workflow: WorkflowViewSchema.optional().openapi({ description: "With 201 and 200: the workflow" }),
  error: ErrorSchema.shape.error.optional().openapi({ description: "Otherwise: why, as the start alone would have said it" }),
});

const StartBatchResultsSchema = z.object({ results: z.array(BatchResultSchema) }).openapi("StartBatchResults");

const batchRoute = createRoute({
  method: "post",
  path: "/v1/workflows/batch",
  operationId: "startWorkflowsBatch",
  summary: `Start up to ${MAX_BATCH_STARTS} workflows, each exactly as POST /v1/workflows would (idempotent by id); one bad item refuses no other`,
  security: BEARER_AUTH,
  request: jsonBody(StartBatchSchema),
  responses: {
    200: jsonContent(StartBatchResultsSchema, "Each item's answer, in item order"),
    ...errorResponses(400, 401, 413, 415, 429, 503),
  },
});

type BatchResult = z.infer<typeof BatchResultSchema>;

/** One item's answer, with the status and error its start alone would have been answered with. */
function resultOf(outcome: BatchItemOutcome, index: number, path: string): BatchResult {
  if (outcome.ok) return { index, status: outcome.created ? 201 : 200, workflow: outcome.workflow };
  const { status, error } = errorAnswer(outcome.code === "thrown" ? outcome.error : rejectionToError(outcome), path);
  return { index, status, error };
}

export const workflowBatchRoutes = new OpenAPIHono<AppEnv>().openapi(batchRoute, async (c) => {
  const { workflows } = c.req.valid("json");
  const outcomes = await startWorkflowBatch(c.env, c.get("tenant"), workflows);
  return c.json({ results: outcomes.map((outcome, index) => resultOf(outcome, index, c.req.path)) }, 200);
});
