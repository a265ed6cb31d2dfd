import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { TaskCompleteSchema, TaskFailSchema, TaskHeartbeatSchema } from "../domain/language/schemas";
import { isExpired, verifyTaskToken, type TaskTokenClaims } from "../domain/security/task-token";
import { schedulerFor } from "../workflow/client";
import { poolFor, taskKey } from "../pools/pool-stub";
import type { AppEnv } from "./app-env";
import { ApiError, workflowRejectionToError } from "./errors";
import { errorResponses, jsonBody, jsonContent, TASK_TOKEN_IN_PATH } from "./openapi-helpers";
import { TaskParamsSchema } from "./schemas";
import { workerAnswer, type AttemptExchange } from "../domain/exchange/exchange";

const taskErrors = errorResponses(400, 401, 404, 409, 410, 415);
const TASK_DESCRIPTION = "Authorised by the task token in the path alone (the one a task message or a pool's poll carried), with no API token.";

const heartbeatRoute = createRoute({
  method: "post",
  path: "/v1/tasks/{token}/heartbeat",
  operationId: "heartbeatTask",
  summary: "Heartbeat for the attempt the task token names",
  description: TASK_DESCRIPTION,
  security: TASK_TOKEN_IN_PATH,
  request: { params: TaskParamsSchema, ...jsonBody(TaskHeartbeatSchema) },
  responses: { 200: jsonContent(z.object({ cancelRequested: z.boolean() }), "Recorded"), ...taskErrors },
});

const completeRoute = createRoute({
  method: "post",
  path: "/v1/tasks/{token}/complete",
  operationId: "completeTask",
  summary: "Complete the attempt the task token names",
  description: TASK_DESCRIPTION,
  security: TASK_TOKEN_IN_PATH,
  request: { params: TaskParamsSchema, ...jsonBody(TaskCompleteSchema) },
  responses: { 200: jsonContent(z.object({ ok: z.literal(true) }), "Recorded"), ...taskErrors },
});

const failRoute = createRoute({
  method: "post",
  path: "/v1/tasks/{token}/fail",
  operationId: "failTask",
  summary: "Fail the attempt the task token names",
  description: TASK_DESCRIPTION,
  security: TASK_TOKEN_IN_PATH,
  request: { params: TaskParamsSchema, ...jsonBody(TaskFailSchema) },
  responses: { 200: jsonContent(z.object({ ok: z.literal(true) }), "Recorded"), ...taskErrors },
});

/** The token alone authorises these routes: it is a signed capability for one attempt. */
async function claimsOf(token: string, env: Env): Promise<TaskTokenClaims> {
  if (!env.TASK_TOKEN_SECRET) {
    throw new ApiError(401, "unauthorized", "Task tokens are not configured: set the TASK_TOKEN_SECRET secret.");
  }
  const claims = await verifyTaskToken(token, env.TASK_TOKEN_SECRET);
  if (!claims) throw new ApiError(401, "unauthorized", "The task token is invalid.");
  if (isExpired(claims, Date.now())) {
    throw new ApiError(401, "unauthorized", "The task token has expired: its attempt's deadline passed; a retry has a token of its own.");
  }
  return claims;
}

function schedulerOf(env: Env, claims: TaskTokenClaims) {
  return schedulerFor(env, claims.tenant, claims.workflowId);
}

/** A worker's report on a pool's task: the pool stops counting it as running (best effort, after the answer). */
function tellPool(env: Env, executionCtx: { waitUntil(promise: Promise<unknown>): void }, claims: TaskTokenClaims): void {
  if (claims.pool === undefined) return;
  const key = taskKey(claims.workflowId, claims.stepId, claims.attempt);
  executionCtx.waitUntil(poolFor(env, claims.tenant, claims.pool).finished(key).catch(() => undefined));
}

/**
 * A worker's report is its attempt's answer (its task, the request, was kept when its pool handed it out). A remote
 * that answered 202 and reports later keeps the 202 as its answer: its report is the step's output or error.
 */
function answerOf(claims: TaskTokenClaims, reported: { output: unknown } | { error: unknown }): { exchange?: AttemptExchange } {
  return claims.pool === undefined ? {} : { exchange: workerAnswer(reported) };
}

export const taskRoutes = new OpenAPIHono<AppEnv>()
  .openapi(heartbeatRoute, async (c) => {
    const claims = await claimsOf(c.req.valid("param").token, c.env);
    const body = c.req.valid("json");
    const reply = await schedulerOf(c.env, claims).heartbeat(claims.stepId, claims.attempt, "progress" in body ? { value: body.progress } : {});
    if (!reply.ok) throw workflowRejectionToError(claims.workflowId, reply);
    return c.json({ cancelRequested: "cancelRequested" in reply ? reply.cancelRequested : false }, 200);
  })
  .openapi(completeRoute, async (c) => {
    const claims = await claimsOf(c.req.valid("param").token, c.env);
    const { output } = c.req.valid("json");
    const reply = await schedulerOf(c.env, claims).report(claims.stepId, claims.attempt, { type: "succeeded", output: output ?? null, ...answerOf(claims, { output: output ?? null }) });
    tellPool(c.env, c.executionCtx, claims);
    if (!reply.ok) throw workflowRejectionToError(claims.workflowId, reply);
    return c.json({ ok: true as const }, 200);
  })
  .openapi(failRoute, async (c) => {
    const claims = await claimsOf(c.req.valid("param").token, c.env);
    const { error } = c.req.valid("json");
    const reply = await schedulerOf(c.env, claims).report(claims.stepId, claims.attempt, {
      type: "failed",
      // The reporter's own word decides, whatever the step's status lists say (there is no status).
      error: { message: error.message, retryable: error.retryable ?? true, rule: "reported" },
      ...answerOf(claims, { error }),
    });
    tellPool(c.env, c.executionCtx, claims);
    if (!reply.ok) throw workflowRejectionToError(claims.workflowId, reply);
    return c.json({ ok: true as const }, 200);
  });
