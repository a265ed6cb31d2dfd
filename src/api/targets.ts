import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { CIRCUIT_STATES } from "../domain/breaker/machine";
import { listTargets } from "../breakers/targets-index";
import { LIST_PAGE_MAX } from "../domain/contract";
import type { AppEnv } from "./app-env";
import { BEARER_AUTH, errorResponses, jsonContent } from "./openapi-helpers";

/** A breaker's host as `breakerHostOf` writes it: lower case, with a port when it is not the scheme's default. */
const HostSchema = z.string().regex(/^[a-z0-9._:[\]-]{1,300}$/, "must be a host as GET /v1/targets lists it");

const TargetSchema = z
  .object({
    host: z.string(),
    state: z.enum(CIRCUIT_STATES),
    /** Transient failures in a row. */
    failures: z.number(),
    /** Open until then (half-open since then); absent while closed. */
    openUntil: z.number().optional(),
    /** Attempts waiting for the breaker to close. */
    parked: z.number(),
  })
  .openapi("Target");

const TargetListSchema = z.object({ targets: z.array(TargetSchema), nextCursor: z.string().optional() }).openapi("TargetList");

const listTargetsRoute = createRoute({
  method: "get",
  path: "/v1/targets",
  operationId: "listTargets",
  summary: "The circuit breakers of the tenant's target hosts that have seen transient failures, by host",
  security: BEARER_AUTH,
  request: {
    query: z.object({
      limit: z.coerce.number().int().min(1).max(LIST_PAGE_MAX).optional(),
      cursor: HostSchema.optional().openapi({ description: "A previous page's nextCursor" }),
    }),
  },
  responses: { 200: jsonContent(TargetListSchema, "A page of targets"), ...errorResponses(400, 401, 503) },
});

/** Read from the listing in D1, which each breaker keeps up to date (its object is the truth; see target-breaker.ts). */
export const targetRoutes = new OpenAPIHono<AppEnv>().openapi(listTargetsRoute, async (c) => {
  const { limit = LIST_PAGE_MAX, cursor } = c.req.valid("query");
  const targets = await listTargets(c.env.DB, c.get("tenant"), limit, cursor);
  const last = targets[targets.length - 1];
  return c.json({ targets, ...(targets.length === limit && last !== undefined ? { nextCursor: last.host } : {}) }, 200);
});
