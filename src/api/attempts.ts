import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { AttemptDetailSchema as DomainAttemptDetailSchema } from "../domain/machine/attempt-detail";
import { CAPTURED_BODY_BYTES, KEPT_EXCHANGES } from "../domain/exchange/exchange";
import { schedulerFor } from "../workflow/client";
import type { AppEnv } from "./app-env";
import { workflowRejectionToError } from "./errors";
import { BEARER_AUTH, errorResponses, jsonContent } from "./openapi-helpers";
import { StepParamsSchema } from "./schemas";

/** Digits only, as a version's: "01" or "1e0" names no attempt. */
const AttemptParamsSchema = StepParamsSchema.extend({
  n: z
    .string()
    .regex(/^[1-9][0-9]{0,8}$/, "must be an attempt number (1, 2, 3 …)")
    .openapi({ param: { name: "n", in: "path" }, example: "1" }),
});

export const AttemptDetailSchema = DomainAttemptDetailSchema.openapi("AttemptDetail");

const attemptRoute = createRoute({
  method: "get",
  operationId: "getAttempt",
  path: "/v1/workflows/{id}/steps/{stepId}/attempts/{n}",
  summary: "One attempt of a step: what it sent and what came back",
  description:
    `The attempt as the workflow's step lists it, with \`request\` (method, URL, headers as sent with credentials redacted, body) ` +
    `and \`response\` (status, a few headers, body); \`verify\` when the attempt asked the step's verify first. A worker task's ` +
    `request is the input its pool handed out, and its response what the worker reported. Each body keeps its first ` +
    `${CAPTURED_BODY_BYTES} bytes (\`truncated: true\` past that, with the whole length in \`bytes\`). Absent while an http attempt ` +
    `runs (a worker task's request is kept from its hand-out), for one whose agent never reported, and for attempts older ` +
    `than the step's latest ${KEPT_EXCHANGES}.`,
  security: BEARER_AUTH,
  request: { params: AttemptParamsSchema },
  responses: { 200: jsonContent(AttemptDetailSchema, "The attempt"), ...errorResponses(400, 401, 404, 503) },
});

export const attemptRoutes = new OpenAPIHono<AppEnv>().openapi(attemptRoute, async (c) => {
  const { id, stepId, n } = c.req.valid("param");
  const found = await schedulerFor(c.env, c.get("tenant"), id).attempt(stepId, Number(n));
  if (!found.ok) throw workflowRejectionToError(id, found);
  return c.json(found.attempt, 200);
});
