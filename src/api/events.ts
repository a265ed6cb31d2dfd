import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { SendEventSchema } from "../domain/language/schemas";
import { schedulerFor } from "../workflow/client";
import type { AppEnv } from "./app-env";
import { workflowRejectionToError } from "./errors";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";
import { WorkflowParamsSchema } from "./schemas";

const EventAnswerSchema = z.object({ consumed: z.boolean().openapi({ description: "Whether a waiting step took it now (false: kept in the inbox)" }) }).openapi("EventAnswer");

const sendEventRoute = createRoute({
  method: "post",
  path: "/v1/workflows/{id}/events",
  operationId: "sendEvent",
  summary: "Send an event (signal): a waiting step takes it, or the inbox keeps it for the first wait that starts later",
  security: BEARER_AUTH,
  request: { params: WorkflowParamsSchema, ...jsonBody(SendEventSchema) },
  responses: {
    202: jsonContent(EventAnswerSchema, "Received"),
    200: jsonContent(EventAnswerSchema, "An event with this id was sent before: its first answer, and no second delivery"),
    ...errorResponses(400, 401, 404, 409, 413, 415, 429, 503),
  },
});

/**
 * Events (signals) are not operator commands: their callers dedupe them by id, and they answer what took them.
 * The history still says who sent one, and why when the sender says (an operator answering a wait by hand).
 */
export const eventRoutes = new OpenAPIHono<AppEnv>().openapi(sendEventRoute, async (c) => {
  const { id } = c.req.valid("param");
  const { reason, ...sent } = c.req.valid("json");
  const by = { actor: c.get("actor"), ...(reason === undefined ? {} : { reason }) };
  const reply = await schedulerFor(c.env, c.get("tenant"), id).sendEvent(sent, by);
  if (!reply.ok) throw workflowRejectionToError(id, reply);
  return c.json({ consumed: reply.consumed }, reply.duplicate ? 200 : 202);
});
