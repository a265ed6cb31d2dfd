import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { BULK_ACTIONS, BULK_JOB_STATUSES, LIST_PAGE_MAX } from "../domain/contract";
import { BulkFilterSchema, BulkRequestSchema } from "../domain/bulk/request";
import type { BulkJobView } from "../domain/bulk/job";
import { IdSchema, SendEventSchema } from "../domain/language/schemas";
import { listBulkJobRefs } from "../bulk/bulk-index";
import { bulkJobFor } from "../bulk/bulk-stub";
import { decodeCursor, encodeCursor } from "../workflow-index/cursor";
import type { AppEnv } from "./app-env";
import { ApiError, validationFailed } from "./errors";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";

/** Jobs per page of `GET /v1/bulk` unless asked: each is read from its own object. */
const BULK_LIST_DEFAULT = 20;

const BulkJobSchema = z
  .object({
    id: z.string(),
    action: z.enum(BULK_ACTIONS),
    status: z.enum(BULK_JOB_STATUSES),
    matched: z.number().openapi({ description: "Workflows matched, each counted once; it grows while the job reads the index, which it does before it acts" }),
    done: z.number().openapi({ description: "Workflows the action was applied to (or had nothing to do: pausing a paused one)" }),
    failed: z.number().openapi({ description: "Workflows that refused the action (an ended workflow refuses a cancel), or never answered" }),
    errors: z
      .array(z.object({ workflowId: z.string(), code: z.string(), message: z.string() }))
      .openapi({ description: "The first 100 refusals, in the order the workflows were matched; `failed` counts them all" }),
    filter: BulkFilterSchema,
    reason: z.string().optional(),
    event: SendEventSchema.optional(),
    actor: z.string().openapi({ description: "Who created the job: the API token's name (its tenant without one)" }),
    createdAt: z.number(),
    endedAt: z.number().optional().openapi({ description: "When every matching workflow had been acted on" }),
  })
  .openapi("BulkJob");

const BulkParamsSchema = z.object({ id: IdSchema.openapi({ param: { name: "id", in: "path" } }) });

const startBulkRoute = createRoute({
  method: "post",
  path: "/v1/bulk",
  operationId: "startBulkJob",
  summary: "Act on every workflow a filter matches (cancel, terminate, redrive, pause, resume, or send an event), as a durable, paced job",
  security: BEARER_AUTH,
  request: jsonBody(BulkRequestSchema.openapi("BulkRequest")),
  responses: {
    202: jsonContent(BulkJobSchema, "Accepted: the job, which runs on its own; follow it with GET /v1/bulk/{id}"),
    200: jsonContent(BulkJobSchema, "The same request under the same id again: the job it created"),
    ...errorResponses(400, 401, 409, 413, 415, 429, 503),
  },
});

const getBulkRoute = createRoute({
  method: "get",
  path: "/v1/bulk/{id}",
  operationId: "getBulkJob",
  summary: "Read a bulk job: its status and counts (matched = done + failed once it is done) and its first refusals",
  security: BEARER_AUTH,
  request: { params: BulkParamsSchema },
  responses: { 200: jsonContent(BulkJobSchema, "The job"), ...errorResponses(400, 401, 404, 503) },
});

const listBulkRoute = createRoute({
  method: "get",
  path: "/v1/bulk",
  operationId: "listBulkJobs",
  summary: "The tenant's bulk jobs, newest first",
  security: BEARER_AUTH,
  request: {
    query: z.strictObject({
      limit: z.coerce.number().int().min(1).max(LIST_PAGE_MAX).optional().openapi({ description: `Jobs per page, at most ${LIST_PAGE_MAX} (default ${BULK_LIST_DEFAULT})` }),
      cursor: z.string().min(1).max(1024).optional().openapi({ description: "A previous page's nextCursor" }),
    }),
  },
  responses: { 200: jsonContent(z.object({ jobs: z.array(BulkJobSchema), nextCursor: z.string().optional() }).openapi("BulkJobList"), "One page"), ...errorResponses(400, 401, 503) },
});

export const bulkRoutes = new OpenAPIHono<AppEnv>()
  .openapi(startBulkRoute, async (c) => {
    const tenant = c.get("tenant");
    const { id = crypto.randomUUID(), action, filter, reason, event } = c.req.valid("json");
    // The job's actions are those of the token that created it: its name is the actor of each.
    const spec = { id, tenant, action, filter, actor: c.get("actor"), createdAt: Date.now(), ...(reason === undefined ? {} : { reason }), ...(event === undefined ? {} : { event }) };
    const { outcome, job } = await bulkJobFor(c.env, tenant, id).create(spec);
    if (outcome === "conflict") throw new ApiError(409, "conflict", `Bulk job "${id}" exists with a different request (action, filter, reason or event).`);
    return outcome === "created" ? c.json(job, 202) : c.json(job, 200);
  })
  .openapi(listBulkRoute, async (c) => {
    const { limit = BULK_LIST_DEFAULT, cursor } = c.req.valid("query");
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    if (cursor !== undefined && !after) throw validationFailed([{ code: "custom", path: ["cursor"], message: "is not a cursor this API returned" }]);
    const tenant = c.get("tenant");
    const refs = await listBulkJobRefs(c.env, tenant, limit, after);
    const page = refs.slice(0, limit);
    const jobs = await Promise.all(page.map((ref) => bulkJobFor(c.env, tenant, ref.id).describe()));
    const last = page.at(-1);
    const nextCursor = refs.length > limit && last ? encodeCursor(last) : undefined;
    return c.json({ jobs: jobs.filter((job): job is BulkJobView => job !== undefined), ...(nextCursor ? { nextCursor } : {}) }, 200);
  })
  .openapi(getBulkRoute, async (c) => {
    const { id } = c.req.valid("param");
    const job = await bulkJobFor(c.env, c.get("tenant"), id).describe();
    if (!job) throw new ApiError(404, "not_found", `No bulk job "${id}".`);
    return c.json(job, 200);
  });
