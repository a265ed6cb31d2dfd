import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { PoolNameSchema } from "../domain/language/actions";
import { poolFor } from "../pools/pool-stub";
import { poolStats } from "../pools/pool-index";
import { MAX_POLL_WAIT_MS } from "../pools/pool-types";
import type { AppEnv } from "./app-env";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";

/** A poll that does not say waits this long for a task. */
const DEFAULT_POLL_WAIT_MS = 20_000;
/** The most tasks one poll takes. */
const MAX_TASKS_PER_POLL = 100;

const PoolParamsSchema = z.object({ pool: PoolNameSchema.openapi({ param: { name: "pool", in: "path" }, example: "gpu" }) });

const PollSchema = z
  .strictObject({
    workerId: z.string().min(1).max(128).openapi({ description: "The worker's own name: listed by GET /v1/pools with its last poll" }),
    waitMs: z.int().min(0).max(MAX_POLL_WAIT_MS).optional().openapi({ description: "How long to wait for a task (default 20000, at most 60000)" }),
    max: z.int().min(1).max(MAX_TASKS_PER_POLL).optional().openapi({ description: "The most tasks to take (default 1)" }),
  })
  .openapi("PollRequest");

const WorkerTaskSchema = z
  .object({
    token: z.string().openapi({ description: "The attempt's task token: report with /v1/tasks/{token}/heartbeat, /complete or /fail" }),
    workflowId: z.string(),
    stepId: z.string(),
    index: z.number().optional().openapi({ description: "The item's index, for a map's item" }),
    attempt: z.number(),
    kind: z.enum(["action", "compensation"]),
    input: z.unknown(),
    heartbeatMs: z.number(),
    startToCloseMs: z.number(),
    deadlineAt: z.number(),
    idempotencyKey: z.string(),
  })
  .openapi("WorkerTask");

const PoolSchema = z
  .object({
    name: z.string(),
    pending: z.number().openapi({ description: "Tasks waiting for a worker" }),
    oldestPendingAgeMs: z.number().nullable().openapi({ description: "How long the longest-waiting task has waited; null when none waits" }),
    running: z.number().openapi({ description: "Tasks handed to a worker, not yet reported, within their deadline" }),
    workers: z.array(z.object({ id: z.string(), lastPollAt: z.number() })).openapi({ description: "Workers seen polling in the last 5 minutes" }),
  })
  .openapi("Pool");

const pollRoute = createRoute({
  method: "post",
  path: "/v1/pools/{pool}/tasks/poll",
  operationId: "pollTasks",
  summary: "A worker's long poll: up to `max` tasks of the pool as soon as there are any, or none after `waitMs`",
  security: BEARER_AUTH,
  request: { params: PoolParamsSchema, ...jsonBody(PollSchema) },
  responses: { 200: jsonContent(z.object({ tasks: z.array(WorkerTaskSchema) }), "The tasks taken (each handed to this poll only)"), ...errorResponses(400, 401, 413, 415, 429, 503) },
});

const listPoolsRoute = createRoute({
  method: "get",
  path: "/v1/pools",
  operationId: "listPools",
  summary: "The tenant's worker pools: pending and running tasks, the oldest wait, and the workers seen",
  security: BEARER_AUTH,
  responses: { 200: jsonContent(z.object({ pools: z.array(PoolSchema) }).openapi("PoolList"), "Every pool that was offered a task or polled"), ...errorResponses(401, 503) },
});

export const poolRoutes = new OpenAPIHono<AppEnv>()
  .openapi(pollRoute, async (c) => {
    // The wait counts from the request's arrival at the Worker, not from the pool's: the answer is due by waitMs,
    // whatever authentication, the rate limit and the hop to the pool's object took.
    const arrivedAt = c.get("arrivedAt");
    const { pool } = c.req.valid("param");
    const { workerId, waitMs = DEFAULT_POLL_WAIT_MS, max = 1 } = c.req.valid("json");
    const tenant = c.get("tenant");
    const stub = poolFor(c.env, tenant, pool);
    const pollId = crypto.randomUUID();
    // A worker that goes away mid-poll (its request cancelled) must not be handed a task it will never do.
    const abandon = (): void => c.executionCtx.waitUntil(stub.abandon(pollId).catch(() => undefined));
    const signal = c.req.raw.signal;
    signal.addEventListener("abort", abandon, { once: true });
    try {
      return c.json(await stub.poll({ pollId, tenant, pool, workerId, until: arrivedAt + waitMs, max }), 200);
    } finally {
      signal.removeEventListener("abort", abandon);
    }
  })
  .openapi(listPoolsRoute, async (c) => {
    return c.json({ pools: await poolStats(c.env, c.get("tenant")) }, 200);
  });
