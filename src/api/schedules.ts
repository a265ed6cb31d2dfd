import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { canonicalJson } from "../domain/security/canonical-json";
import { LIST_PAGE_MAX } from "../domain/contract";
import { ScheduleIdSchema, ScheduleSpecSchema } from "../domain/cron/spec";
import { runnableDefinition } from "../admission/start-workflow";
import { ScheduleViewSchema as DomainScheduleViewSchema, type ScheduleView } from "../domain/cron/view";
import { scheduleObject } from "../cron/schedule-client";
import { indexSchedule, listScheduleIds, unindexSchedule } from "../cron/schedule-index";
import { sha256Hex } from "../domain/security/sha256";
import type { AppEnv } from "./app-env";
import { ApiError, rejectionToError } from "./errors";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";

const ScheduleViewSchema = DomainScheduleViewSchema.openapi("Schedule");
const ScheduleParamsSchema = z.object({ id: ScheduleIdSchema.openapi({ param: { name: "id", in: "path" } }) });
const ScheduleListSchema = z.object({ schedules: z.array(ScheduleViewSchema), nextCursor: z.string().optional() }).openapi("ScheduleList");

const createScheduleRoute = createRoute({
  method: "post",
  path: "/v1/schedules",
  operationId: "createSchedule",
  summary: "Create a cron schedule that starts a workflow at each fire (idempotent by id)",
  security: BEARER_AUTH,
  request: jsonBody(ScheduleSpecSchema),
  responses: {
    201: jsonContent(ScheduleViewSchema, "Created"),
    200: jsonContent(ScheduleViewSchema, "Already created with this same body"),
    ...errorResponses(400, 401, 404, 409, 413, 415, 429, 503),
  },
});

const listSchedulesRoute = createRoute({
  method: "get",
  path: "/v1/schedules",
  operationId: "listSchedules",
  summary: "The tenant's schedules, by id",
  security: BEARER_AUTH,
  request: {
    query: z.object({
      limit: z.coerce.number().int().min(1).max(LIST_PAGE_MAX).optional(),
      cursor: ScheduleIdSchema.optional().openapi({ description: "A previous page's nextCursor" }),
    }),
  },
  responses: { 200: jsonContent(ScheduleListSchema, "A page of schedules"), ...errorResponses(400, 401, 503) },
});

const getScheduleRoute = createRoute({
  method: "get",
  path: "/v1/schedules/{id}",
  operationId: "getSchedule",
  summary: "Read a schedule: its next fire and its recent fires with their outcome",
  security: BEARER_AUTH,
  request: { params: ScheduleParamsSchema },
  responses: { 200: jsonContent(ScheduleViewSchema, "The schedule"), ...errorResponses(400, 401, 404, 503) },
});

function scheduleAction(action: "pause" | "resume" | "trigger", summary: string) {
  return createRoute({
    method: "post",
    path: `/v1/schedules/{id}/${action}`,
    operationId: `${action}Schedule`,
    summary,
    security: BEARER_AUTH,
    request: { params: ScheduleParamsSchema },
    responses: { 200: jsonContent(ScheduleViewSchema, "The schedule after the action"), ...errorResponses(400, 401, 404, 429, 503) },
  });
}

const deleteScheduleRoute = createRoute({
  method: "delete",
  path: "/v1/schedules/{id}",
  operationId: "deleteSchedule",
  summary: "Delete a schedule and its alarm (the workflows it started run on)",
  security: BEARER_AUTH,
  request: { params: ScheduleParamsSchema },
  responses: {
    200: jsonContent(z.object({ id: z.string(), deleted: z.literal(true) }), "Deleted"),
    ...errorResponses(400, 401, 404, 503),
  },
});

type Outcome = { ok: true; schedule: ScheduleView } | { ok: false; code: string; message: string };

async function act(c: Context<AppEnv>, id: string, action: (object: ReturnType<typeof scheduleObject>) => Promise<Outcome>) {
  const outcome = await action(scheduleObject(c.env, c.get("tenant"), id));
  if (!outcome.ok) throw rejectionToError({ code: outcome.code, message: outcome.code === "not_found" ? `schedule "${id}" not found` : outcome.message });
  return outcome.schedule;
}

export const scheduleRoutes = new OpenAPIHono<AppEnv>()
  .openapi(createScheduleRoute, async (c) => {
    const spec = c.req.valid("json");
    const tenant = c.get("tenant");
    // What every fire will start is checked now, as a start would check it: a bad reference is a 404 today, not
    // a failed fire tomorrow. (A reference can still go bad later only if versions were deleted; they are not.)
    const runnable = await runnableDefinition(c.env, tenant, spec.workflow, ["workflow"]);
    if (!runnable.ok) throw rejectionToError(runnable);
    const result = await scheduleObject(c.env, tenant, spec.id).create({ tenant, spec, requestHash: await sha256Hex(canonicalJson(spec)) });
    if (!result.ok) throw new ApiError(409, "conflict", result.message);
    // Listed once created. Should the listing's write fail, the schedule still fires; the client is told to retry
    // (a 200 replay), which writes it again.
    try {
      await indexSchedule(c.env.DB, tenant, spec.id, result.schedule.createdAt);
    } catch (error) {
      console.error(JSON.stringify({ message: "schedule created but not listed", tenant, scheduleId: spec.id, error: String(error) }));
      throw new ApiError(503, "unavailable", "The schedule was created but could not be listed; send the same request again.", undefined, { "Retry-After": "1" });
    }
    return c.json(result.schedule, result.created ? 201 : 200);
  })
  .openapi(listSchedulesRoute, async (c) => {
    const { limit = 50, cursor } = c.req.valid("query");
    const tenant = c.get("tenant");
    const ids = await listScheduleIds(c.env.DB, tenant, limit, cursor);
    const views = await Promise.all(ids.map((id) => scheduleObject(c.env, tenant, id).describe()));
    const schedules = views.filter((view): view is ScheduleView => view !== undefined);
    const last = ids[ids.length - 1];
    return c.json({ schedules, ...(ids.length === limit && last !== undefined ? { nextCursor: last } : {}) }, 200);
  })
  .openapi(getScheduleRoute, async (c) => {
    const { id } = c.req.valid("param");
    const view = await scheduleObject(c.env, c.get("tenant"), id).describe();
    if (!view) throw new ApiError(404, "not_found", `schedule "${id}" not found`);
    return c.json(view, 200);
  })
  .openapi(scheduleAction("pause", "Pause a schedule: no fires until resumed"), async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await act(c, id, (object) => object.pause()), 200);
  })
  .openapi(scheduleAction("resume", "Resume a schedule: the next fire is computed from now (no catch-up of the pause)"), async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await act(c, id, (object) => object.resume()), 200);
  })
  .openapi(scheduleAction("trigger", "Fire now, under the schedule's overlap policy"), async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await act(c, id, (object) => object.trigger()), 200);
  })
  .openapi(deleteScheduleRoute, async (c) => {
    const { id } = c.req.valid("param");
    const tenant = c.get("tenant");
    const result = await scheduleObject(c.env, tenant, id).remove();
    if (!result.ok) throw new ApiError(404, "not_found", `schedule "${id}" not found`);
    await unindexSchedule(c.env.DB, tenant, id);
    return c.json({ id, deleted: true as const }, 200);
  });
