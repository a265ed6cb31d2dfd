import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { WORKFLOW_STATUSES } from "../domain/machine/state";
import { WorkflowResultSchema as DomainWorkflowResultSchema } from "../domain/machine/view";
import { schedulerFor } from "../workflow/client";
import type { AppEnv } from "./app-env";
import { noSuchWorkflow } from "./errors";
import { BEARER_AUTH, errorResponses, jsonContent } from "./openapi-helpers";
import { WorkflowParamsSchema } from "./schemas";

/** A wait that does not say how long waits this long. */
const DEFAULT_RESULT_WAIT_MS = 30_000;
/** The longest a request may wait: past a minute, proxies and clients give up on a quiet connection. */
export const MAX_RESULT_WAIT_MS = 60_000;

const ResultQuerySchema = z.object({
  waitMs: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_RESULT_WAIT_MS)
    .optional()
    .openapi({ description: `How long to wait for the workflow to end, counted from the request's arrival (default ${DEFAULT_RESULT_WAIT_MS}, at most ${MAX_RESULT_WAIT_MS})` }),
});

const WorkflowResultSchema = DomainWorkflowResultSchema.openapi("WorkflowResult");

const PendingResultSchema = z.object({ id: z.string(), status: z.enum(WORKFLOW_STATUSES) }).openapi("PendingWorkflowResult");

const resultRoute = createRoute({
  method: "get",
  path: "/v1/workflows/{id}/result",
  operationId: "getWorkflowResult",
  summary: "A long poll for a workflow's result: its output or error as soon as it has ended, or 202 once `waitMs` passes first",
  security: BEARER_AUTH,
  request: { params: WorkflowParamsSchema, query: ResultQuerySchema },
  responses: {
    200: jsonContent(WorkflowResultSchema, "The workflow has ended (completed, failed, compensated, cancelled or terminated)"),
    202: jsonContent(PendingResultSchema, "It had not ended when `waitMs` passed: ask again"),
    ...errorResponses(400, 401, 404, 503),
  },
});

export const workflowResultRoutes = new OpenAPIHono<AppEnv>().openapi(resultRoute, async (c) => {
  // Counted from the request's arrival, so the answer is due by waitMs whatever authentication and the hop took.
  const until = c.get("arrivedAt") + (c.req.valid("query").waitMs ?? DEFAULT_RESULT_WAIT_MS);
  const { id } = c.req.valid("param");
  const scheduler = schedulerFor(c.env, c.get("tenant"), id);
  const waitId = crypto.randomUUID();
  // A caller that goes away mid-wait (its request cancelled) leaves nothing waiting for it in the object.
  const abandon = (): void => c.executionCtx.waitUntil(scheduler.abandonResult(waitId).catch(() => undefined));
  const signal = c.req.raw.signal;
  signal.addEventListener("abort", abandon, { once: true });
  try {
    const answer = await scheduler.result({ waitId, until });
    if (!answer.ok) throw noSuchWorkflow(id);
    const { result } = answer;
    return answer.ended ? c.json(result, 200) : c.json({ id: result.id, status: result.status }, 202);
  } finally {
    signal.removeEventListener("abort", abandon);
  }
});
