import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { SkipStepSchema } from "../domain/schemas";
import { schedulerFor, type SchedulerClient } from "../workflow/client";
import type { AppEnv } from "./app-env";
import { workflowOr404 } from "./workflow-or-404";
import { rejectionToError } from "./errors";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";
import { StepParamsSchema, WorkflowParamsSchema, WorkflowViewSchema } from "./schemas";

const accepted = { 202: jsonContent(WorkflowViewSchema, "Accepted: the workflow after the action"), ...errorResponses(400, 401, 404, 409, 413, 429, 503) };

const cancelRoute = createRoute({
  method: "post",
  path: "/v1/workflows/{id}/cancel",
  summary: "Cancel: fence running attempts, compensate succeeded steps, end cancelled",
  security: BEARER_AUTH,
  request: { params: WorkflowParamsSchema },
  responses: accepted,
});

const compensateRoute = createRoute({
  method: "post",
  path: "/v1/workflows/{id}/compensate",
  summary: "Give up on a workflow in needs_attention: compensate, then end compensated",
  security: BEARER_AUTH,
  request: { params: WorkflowParamsSchema },
  responses: accepted,
});

const retryStepRoute = createRoute({
  method: "post",
  path: "/v1/workflows/{id}/steps/{stepId}/retry",
  summary: "Retry a failed step with a fresh attempt budget (workflow in needs_attention)",
  security: BEARER_AUTH,
  request: { params: StepParamsSchema },
  responses: accepted,
});

const skipStepRoute = createRoute({
  method: "post",
  path: "/v1/workflows/{id}/steps/{stepId}/skip",
  summary: "Treat a failed step as succeeded with the given output (workflow in needs_attention)",
  security: BEARER_AUTH,
  request: { params: StepParamsSchema, ...jsonBody(SkipStepSchema) },
  responses: { ...accepted, ...errorResponses(415) },
});

type Outcome = { ok: true; unchanged?: true } | { ok: false; code: string; message: string };

/**
 * Every operator and control action: ask the object, map a refusal to its status, answer with the workflow:
 * 202, or 200 when the action changed nothing (pausing a paused workflow).
 */
export async function act(c: Context<AppEnv>, id: string, action: (scheduler: SchedulerClient) => Promise<Outcome>) {
  const outcome = await action(schedulerFor(c.env, c.get("tenant"), id));
  if (!outcome.ok) throw rejectionToError(outcome);
  return { view: await workflowOr404(c.env, c.get("tenant"), id), status: outcome.unchanged ? (200 as const) : (202 as const) };
}

export const operatorRoutes = new OpenAPIHono<AppEnv>()
  .openapi(cancelRoute, async (c) => {
    const { id } = c.req.valid("param");
    return c.json((await act(c, id, (scheduler) => scheduler.cancel())).view, 202);
  })
  .openapi(compensateRoute, async (c) => {
    const { id } = c.req.valid("param");
    return c.json((await act(c, id, (scheduler) => scheduler.compensate())).view, 202);
  })
  .openapi(retryStepRoute, async (c) => {
    const { id, stepId } = c.req.valid("param");
    return c.json((await act(c, id, (scheduler) => scheduler.retryStep(stepId))).view, 202);
  })
  .openapi(skipStepRoute, async (c) => {
    const { id, stepId } = c.req.valid("param");
    const { output } = c.req.valid("json");
    return c.json((await act(c, id, (scheduler) => scheduler.skipStep(stepId, output))).view, 202);
  });
