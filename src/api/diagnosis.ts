import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { BLOCKED_REASONS } from "../domain/machine/diagnosis";
import { WORKFLOW_STATUSES } from "../domain/machine/state";
import { schedulerFor } from "../workflow/client";
import type { AppEnv } from "./app-env";
import { noSuchWorkflow } from "./errors";
import { BEARER_AUTH, errorResponses, jsonContent } from "./openapi-helpers";
import { HistoryEventSchema, WorkflowParamsSchema } from "./schemas";

export const DiagnosisSchema = z
  .object({
    status: z.enum(WORKFLOW_STATUSES),
    healthy: z.boolean().openapi({ description: "False when the liveness invariant breaks; `problems` says how" }),
    blockedOn: z.array(
      z.object({
        stepId: z.string().optional(),
        reason: z.enum(BLOCKED_REASONS),
        since: z.number(),
        until: z.number().optional(),
        detail: z.string(),
        pool: z.string().optional().openapi({ description: "The pool a worker task waits in (`waiting_for_worker`)" }),
      }),
    ),
    nextDeadline: z.object({ at: z.number(), reason: z.string(), stepId: z.string().optional() }).nullable(),
    alarmAt: z.number().nullable(),
    attempts: z.record(z.string(), z.object({ used: z.number(), max: z.number() })),
    recentDecisions: z.array(HistoryEventSchema).openapi({ description: "The supervisor's latest decisions, newest first, at most 20" }),
    problems: z.array(z.string()),
  })
  .openapi("Diagnosis");

const diagnosisRoute = createRoute({
  method: "get",
  path: "/v1/workflows/{id}/diagnosis",
  operationId: "getWorkflowDiagnosis",
  summary: "Why a workflow is where it is: what each open step waits for, the next deadline, the supervisor's recent decisions and the liveness check",
  security: BEARER_AUTH,
  request: { params: WorkflowParamsSchema },
  responses: { 200: jsonContent(DiagnosisSchema, "The diagnosis"), ...errorResponses(400, 401, 404, 503) },
});

export const diagnosisRoutes = new OpenAPIHono<AppEnv>().openapi(diagnosisRoute, async (c) => {
  const { id } = c.req.valid("param");
  const found = await schedulerFor(c.env, c.get("tenant"), id).diagnosis();
  if (!found.ok) throw noSuchWorkflow(id);
  const { ok: _ok, ...diagnosis } = found;
  return c.json(diagnosis, 200);
});
