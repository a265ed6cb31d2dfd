import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { canonicalJson } from "../domain/canonical-json";
import { planWorkflow } from "../domain/definition";
import { StartWorkflowSchema, type StartWorkflowInput } from "../domain/schemas";
import { checkTarget } from "../domain/targets";
import { schedulerFor } from "../scheduler/stub";
import type { AppEnv } from "./context";
import { ApiError, validationFailed, type ValidationIssue } from "./errors";
import { describeOrThrow } from "./describe";
import { errorResponses, jsonBody, jsonContent } from "./openapi-helpers";
import { HistorySchema, WorkflowParamsSchema, WorkflowViewSchema } from "./schemas";

/** Like a Step Functions execution history, long histories come in pages. */
const HISTORY_PAGE_MAX = 1000;

const startRoute = createRoute({
  method: "post",
  path: "/v1/workflows",
  summary: "Start a workflow (idempotent by id)",
  request: jsonBody(StartWorkflowSchema),
  responses: {
    201: jsonContent(WorkflowViewSchema, "Started"),
    200: jsonContent(WorkflowViewSchema, "Already started with this same body"),
    ...errorResponses(400, 409, 415, 503),
  },
});

const getRoute = createRoute({
  method: "get",
  path: "/v1/workflows/{id}",
  summary: "Read a workflow with its steps and attempts",
  request: { params: WorkflowParamsSchema },
  responses: { 200: jsonContent(WorkflowViewSchema, "The workflow"), ...errorResponses(400, 404) },
});

const HistoryQuerySchema = z.object({
  after: z.coerce.number().int().min(0).optional().openapi({ description: "Only events with a greater seq (a previous page's nextAfter)" }),
  limit: z.coerce.number().int().min(1).max(HISTORY_PAGE_MAX).optional().openapi({ description: `Events per page, at most ${HISTORY_PAGE_MAX} (the default)` }),
});

const historyRoute = createRoute({
  method: "get",
  path: "/v1/workflows/{id}/history",
  summary: "The workflow's append-only event history, in order; pages of up to 1000 events",
  request: { params: WorkflowParamsSchema, query: HistoryQuerySchema },
  responses: { 200: jsonContent(HistorySchema, "Events in order; nextAfter is set when more follow"), ...errorResponses(400, 404) },
});

/** Target URLs without templates can be checked before anything runs; templated ones are checked by the agent. */
function targetIssues(body: StartWorkflowInput, allowPrivate: boolean) {
  const issues: ValidationIssue[] = [];
  body.definition.steps.forEach((step, index) => {
    for (const field of ["action", "compensate"] as const) {
      const url = step[field]?.url;
      if (!url || url.includes("{{")) continue;
      const problem = checkTarget(url, { allowPrivate });
      if (problem) issues.push({ code: "custom", path: ["definition", "steps", index, field, "url"], message: problem });
    }
  });
  return issues;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

export const workflowRoutes = new OpenAPIHono<AppEnv>()
  .openapi(startRoute, async (c) => {
    // Without the secret no task could be signed: refuse before anything is stored.
    if (!c.env.TASK_TOKEN_SECRET) {
      throw new ApiError(503, "not_configured", "TASK_TOKEN_SECRET is not set: run `wrangler secret put TASK_TOKEN_SECRET`.");
    }
    const body = c.req.valid("json");
    const issues = targetIssues(body, c.env.ALLOW_PRIVATE_TARGETS === "true");
    if (issues.length > 0) throw validationFailed(issues);
    const id = body.id ?? `wf_${crypto.randomUUID()}`;
    const tenant = c.get("tenant");
    const result = await schedulerFor(c.env, tenant, id).start({
      tenant,
      id,
      plan: planWorkflow(body.definition),
      input: body.input ?? null,
      requestHash: await sha256Hex(canonicalJson({ ...body, id })),
    });
    if (!result.ok) throw new ApiError(409, "conflict", result.message);
    return c.json(result.workflow, result.created ? 201 : 200);
  })
  .openapi(getRoute, async (c) => c.json(await describeOrThrow(c.env, c.get("tenant"), c.req.valid("param").id), 200))
  .openapi(historyRoute, async (c) => {
    const { id } = c.req.valid("param");
    const { after = 0, limit = HISTORY_PAGE_MAX } = c.req.valid("query");
    const scheduler = schedulerFor(c.env, c.get("tenant"), id);
    // One more than asked says whether another page follows.
    const events = await scheduler.history(after, limit + 1);
    if (events.length === 0 && !(await scheduler.describe())) throw new ApiError(404, "not_found", `No workflow "${id}".`);
    const page = events.slice(0, limit);
    const last = page.at(-1);
    return c.json({ events: page, ...(events.length > limit && last ? { nextAfter: last.seq } : {}) }, 200);
  });
