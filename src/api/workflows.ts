import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { canonicalJson } from "../domain/canonical-json";
import { planWorkflow } from "../domain/definition";
import { SkipStepSchema, StartWorkflowSchema, type StartWorkflowInput } from "../domain/schemas";
import { checkTarget } from "../domain/targets";
import { schedulerFor } from "../scheduler/stub";
import type { AppEnv } from "./context";
import { ApiError, rejectionToError } from "./errors";
import { errorResponses, jsonBody, jsonContent } from "./openapi-helpers";
import { HistorySchema, StepParamsSchema, WorkflowParamsSchema, WorkflowViewSchema } from "./schemas";

const startRoute = createRoute({
  method: "post",
  path: "/v1/workflows",
  summary: "Start a workflow (idempotent by id)",
  request: jsonBody(StartWorkflowSchema),
  responses: {
    201: jsonContent(WorkflowViewSchema, "Started"),
    200: jsonContent(WorkflowViewSchema, "Already started with this same body"),
    ...errorResponses(400, 409, 415),
  },
});

const getRoute = createRoute({
  method: "get",
  path: "/v1/workflows/{id}",
  summary: "Read a workflow with its steps and attempts",
  request: { params: WorkflowParamsSchema },
  responses: { 200: jsonContent(WorkflowViewSchema, "The workflow"), ...errorResponses(400, 404) },
});

const historyRoute = createRoute({
  method: "get",
  path: "/v1/workflows/{id}/history",
  summary: "The workflow's append-only event history",
  request: { params: WorkflowParamsSchema },
  responses: { 200: jsonContent(HistorySchema, "Events in order"), ...errorResponses(400, 404) },
});

const operatorResponses = { 202: jsonContent(WorkflowViewSchema, "Accepted"), ...errorResponses(400, 404, 409) };

const cancelRoute = createRoute({
  method: "post",
  path: "/v1/workflows/{id}/cancel",
  summary: "Cancel: fence running attempts, compensate succeeded steps, end cancelled",
  request: { params: WorkflowParamsSchema },
  responses: operatorResponses,
});

const compensateRoute = createRoute({
  method: "post",
  path: "/v1/workflows/{id}/compensate",
  summary: "Give up on a workflow in needs_attention: compensate, then end compensated",
  request: { params: WorkflowParamsSchema },
  responses: operatorResponses,
});

const retryStepRoute = createRoute({
  method: "post",
  path: "/v1/workflows/{id}/steps/{stepId}/retry",
  summary: "Retry a failed step with a fresh attempt budget (workflow in needs_attention)",
  request: { params: StepParamsSchema },
  responses: operatorResponses,
});

const skipStepRoute = createRoute({
  method: "post",
  path: "/v1/workflows/{id}/steps/{stepId}/skip",
  summary: "Treat a failed step as succeeded with the given output (workflow in needs_attention)",
  request: { params: StepParamsSchema, ...jsonBody(SkipStepSchema) },
  responses: { ...operatorResponses, ...errorResponses(415) },
});

/** Target URLs without templates can be checked before anything runs; templated ones are checked by the agent. */
function targetIssues(body: StartWorkflowInput, allowPrivate: boolean) {
  const issues: { path: (string | number)[]; message: string; code: string }[] = [];
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

async function describeOrThrow(env: Env, tenant: string, id: string) {
  const workflow = await schedulerFor(env, tenant, id).describe();
  if (!workflow) throw new ApiError(404, "not_found", `No workflow "${id}".`);
  return workflow;
}

function expectOk(result: { ok: boolean; code?: string; message?: string }): void {
  if (!result.ok) throw rejectionToError({ code: result.code ?? "conflict", message: result.message ?? "" });
}

export const workflowRoutes = new OpenAPIHono<AppEnv>()
  .openapi(startRoute, async (c) => {
    const body = c.req.valid("json");
    const issues = targetIssues(body, c.env.ALLOW_PRIVATE_TARGETS === "true");
    if (issues.length > 0) throw new ApiError(400, "validation_failed", issues[0]?.message ?? "invalid target", issues);
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
    const scheduler = schedulerFor(c.env, c.get("tenant"), id);
    const events = await scheduler.history();
    if (events.length === 0 && !(await scheduler.describe())) throw new ApiError(404, "not_found", `No workflow "${id}".`);
    return c.json({ events }, 200);
  })
  .openapi(cancelRoute, async (c) => {
    const { id } = c.req.valid("param");
    expectOk(await schedulerFor(c.env, c.get("tenant"), id).cancel());
    return c.json(await describeOrThrow(c.env, c.get("tenant"), id), 202);
  })
  .openapi(compensateRoute, async (c) => {
    const { id } = c.req.valid("param");
    expectOk(await schedulerFor(c.env, c.get("tenant"), id).compensate());
    return c.json(await describeOrThrow(c.env, c.get("tenant"), id), 202);
  })
  .openapi(retryStepRoute, async (c) => {
    const { id, stepId } = c.req.valid("param");
    expectOk(await schedulerFor(c.env, c.get("tenant"), id).retryStep(stepId));
    return c.json(await describeOrThrow(c.env, c.get("tenant"), id), 202);
  })
  .openapi(skipStepRoute, async (c) => {
    const { id, stepId } = c.req.valid("param");
    expectOk(await schedulerFor(c.env, c.get("tenant"), id).skipStep(stepId, c.req.valid("json").output));
    return c.json(await describeOrThrow(c.env, c.get("tenant"), id), 202);
  });
