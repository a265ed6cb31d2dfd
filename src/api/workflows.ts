import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { schedulerFor } from "../workflow/client";
import { startFromFrontDoor } from "../admission/starts-in-flight";
import { encodeCursor } from "../workflow-index/cursor";
import { tenantIndexDbs } from "../workflow-index/index-shards";
import { listTenantWorkflows } from "../workflow-index/tenant-listing";
import type { AppEnv } from "./app-env";
import { noSuchWorkflow, rejectionToError } from "./errors";
import { workflowOr404 } from "./workflow-or-404";
import { ListQuerySchema, listQueryOf } from "./workflow-list-query";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";
import { HistorySchema, StartWorkflowBodySchema, WorkflowListSchema, WorkflowParamsSchema, WorkflowViewSchema } from "./schemas";

/** Like a Step Functions execution history, long histories come in pages. */
const HISTORY_PAGE_MAX = 1000;

const startRoute = createRoute({
  method: "post",
  path: "/v1/workflows",
  operationId: "startWorkflow",
  summary: "Start a workflow (idempotent by id), from an inline definition or a published one (definitionRef)",
  security: BEARER_AUTH,
  request: jsonBody(StartWorkflowBodySchema),
  responses: {
    201: jsonContent(WorkflowViewSchema, "Started"),
    200: jsonContent(WorkflowViewSchema, "Already started with this same body"),
    ...errorResponses(400, 401, 404, 409, 413, 415, 429, 503),
  },
});

const getRoute = createRoute({
  method: "get",
  path: "/v1/workflows/{id}",
  operationId: "getWorkflow",
  summary: "Read a workflow with its steps and attempts",
  security: BEARER_AUTH,
  request: { params: WorkflowParamsSchema },
  responses: { 200: jsonContent(WorkflowViewSchema, "The workflow"), ...errorResponses(400, 401, 404, 503) },
});

const HistoryQuerySchema = z.object({
  after: z.coerce.number().int().min(0).optional().openapi({ description: "Only events with a greater seq (a previous page's nextAfter)" }),
  limit: z.coerce.number().int().min(1).max(HISTORY_PAGE_MAX).optional().openapi({ description: `Events per page, at most ${HISTORY_PAGE_MAX} (the default)` }),
});

const historyRoute = createRoute({
  method: "get",
  path: "/v1/workflows/{id}/history",
  operationId: "getWorkflowHistory",
  summary: "The workflow's append-only event history, in order; pages of up to 1000 events",
  security: BEARER_AUTH,
  request: { params: WorkflowParamsSchema, query: HistoryQuerySchema },
  responses: { 200: jsonContent(HistorySchema, "Events in order; nextAfter is set when more follow"), ...errorResponses(400, 401, 404, 503) },
});

const listRoute = createRoute({
  method: "get",
  path: "/v1/workflows",
  operationId: "listWorkflows",
  summary: "List the caller's workflows, newest first, with a line on each open one worth a look (from the index, which follows each workflow closely)",
  security: BEARER_AUTH,
  request: { query: ListQuerySchema },
  responses: { 200: jsonContent(WorkflowListSchema, "One page; nextCursor is set when more follow"), ...errorResponses(400, 401, 503) },
});

export const workflowRoutes = new OpenAPIHono<AppEnv>()
  .openapi(startRoute, async (c) => {
    const result = await startFromFrontDoor(c.env, c.get("tenant"), c.req.valid("json"));
    if (!result.ok) throw rejectionToError(result);
    return c.json(result.workflow, result.created ? 201 : 200);
  })
  .openapi(listRoute, async (c) => {
    const query = listQueryOf(c.req.valid("query"));
    const tenant = c.get("tenant");
    const page = await listTenantWorkflows(tenantIndexDbs(c.env, tenant), tenant, query);
    return c.json({ workflows: page.workflows, ...(page.next ? { nextCursor: encodeCursor(page.next) } : {}) }, 200);
  })
  .openapi(getRoute, async (c) => c.json(await workflowOr404(c.env, c.get("tenant"), c.req.valid("param").id), 200))
  .openapi(historyRoute, async (c) => {
    const { id } = c.req.valid("param");
    const { after = 0, limit = HISTORY_PAGE_MAX } = c.req.valid("query");
    const scheduler = schedulerFor(c.env, c.get("tenant"), id);
    // One more than asked says whether another page follows.
    const events = await scheduler.history(after, limit + 1);
    if (events.length === 0 && !(await scheduler.describe())) throw noSuchWorkflow(id);
    const page = events.slice(0, limit);
    const last = page.at(-1);
    return c.json({ events: page, ...(events.length > limit && last ? { nextAfter: last.seq } : {}) }, 200);
  });
