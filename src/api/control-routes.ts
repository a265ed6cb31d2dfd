import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { RedriveSchema, SendEventSchema, TerminateSchema } from "../domain/schemas";
import { schedulerFor } from "../workflow/client";
import type { AppEnv } from "./app-env";
import { rejectionToError } from "./errors";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";
import { WorkflowParamsSchema, WorkflowViewSchema } from "./schemas";
import { act } from "./operator-actions";

const accepted = { 202: jsonContent(WorkflowViewSchema, "Accepted: the workflow after the action"), ...errorResponses(400, 401, 404, 409, 413, 429, 503) };

// Generic in the action so each path stays a literal type, which the typed client (src/client) relies on.
function controlRoute<Action extends string>(action: Action, summary: string) {
  return createRoute({
    method: "post",
    path: `/v1/workflows/{id}/${action}`,
    summary,
    security: BEARER_AUTH,
    request: { params: WorkflowParamsSchema },
    responses: accepted,
  });
}

const pauseRoute = createRoute({
  ...controlRoute("pause", "Pause: dispatch nothing and hold timers until resumed; running attempts go on"),
  responses: { 200: jsonContent(WorkflowViewSchema, "It was already paused: nothing changed"), ...accepted },
});
const resumeRoute = controlRoute("resume", "Resume a paused workflow: what fell due while paused happens now");
/** The body is optional: `{}` or none at all. */
const terminateRoute = createRoute({
  ...controlRoute("terminate", "Terminate: end terminated at once, fence running attempts, compensate nothing"),
  request: { params: WorkflowParamsSchema, ...jsonBody(TerminateSchema, false) },
  responses: { ...accepted, ...errorResponses(415) },
});
const redriveRoute = createRoute({
  ...controlRoute(
    "redrive",
    "Redrive a failed, cancelled or terminated workflow: steps that did not succeed (or fromStep and everything downstream) run again",
  ),
  request: { params: WorkflowParamsSchema, ...jsonBody(RedriveSchema, false) },
  responses: { ...accepted, ...errorResponses(415) },
});

const EventAnswerSchema = z.object({ consumed: z.boolean().openapi({ description: "Whether a waiting step took it now (false: kept in the inbox)" }) }).openapi("EventAnswer");

const sendEventRoute = createRoute({
  method: "post",
  path: "/v1/workflows/{id}/events",
  summary: "Send an event (signal): a waiting step takes it, or the inbox keeps it for the first wait that starts later",
  security: BEARER_AUTH,
  request: { params: WorkflowParamsSchema, ...jsonBody(SendEventSchema) },
  responses: {
    202: jsonContent(EventAnswerSchema, "Received"),
    200: jsonContent(EventAnswerSchema, "An event with this id was sent before: its first answer, and no second delivery"),
    ...errorResponses(400, 401, 404, 409, 413, 415, 429, 503),
  },
});

export const controlRoutes = new OpenAPIHono<AppEnv>()
  .openapi(pauseRoute, async (c) => {
    const { view, status } = await act(c, c.req.valid("param").id, (scheduler) => scheduler.pause());
    return c.json(view, status);
  })
  .openapi(resumeRoute, async (c) => {
    const { view } = await act(c, c.req.valid("param").id, (scheduler) => scheduler.resume());
    return c.json(view, 202);
  })
  .openapi(terminateRoute, async (c) => {
    const { reason } = c.req.valid("json") ?? {};
    const { view } = await act(c, c.req.valid("param").id, (scheduler) => scheduler.terminate(reason));
    return c.json(view, 202);
  })
  .openapi(redriveRoute, async (c) => {
    const { fromStep } = c.req.valid("json") ?? {};
    const { view } = await act(c, c.req.valid("param").id, (scheduler) => scheduler.redrive(fromStep));
    return c.json(view, 202);
  })
  .openapi(sendEventRoute, async (c) => {
    const { id } = c.req.valid("param");
    const reply = await schedulerFor(c.env, c.get("tenant"), id).sendEvent(c.req.valid("json"));
    if (!reply.ok) throw rejectionToError(reply);
    return c.json({ consumed: reply.consumed }, reply.duplicate ? 200 : 202);
  });
