import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { MAP_ITEM_STATUSES } from "../domain/machine";
import { schedulerFor } from "../workflow/client";
import type { AppEnv } from "./app-env";
import { ApiError, noSuchWorkflow } from "./errors";
import { BEARER_AUTH, errorResponses, jsonContent } from "./openapi-helpers";
import { StepParamsSchema } from "./schemas";

const ITEMS_PAGE_DEFAULT = 100;
const ITEMS_PAGE_MAX = 1000;

const ItemsQuerySchema = z.strictObject({
  status: z.enum(MAP_ITEM_STATUSES).optional().openapi({ description: "Only items with this status" }),
  cursor: z.string().regex(/^\d{1,9}$/).optional().openapi({ description: "A previous page's nextCursor" }),
  limit: z.coerce.number().int().min(1).max(ITEMS_PAGE_MAX).optional().openapi({ description: `Items per page, at most ${ITEMS_PAGE_MAX} (default ${ITEMS_PAGE_DEFAULT})` }),
});

export const MapItemsPageSchema = z
  .object({
    items: z.array(
      z.object({
        index: z.number(),
        status: z.enum(MAP_ITEM_STATUSES),
        attempt: z.number(),
        output: z.unknown().optional(),
        error: z.unknown().optional(),
      }),
    ),
    nextCursor: z.string().optional(),
  })
  .openapi("MapItemsPage");

const itemsRoute = createRoute({
  method: "get",
  operationId: "listMapItems",
  path: "/v1/workflows/{id}/steps/{stepId}/items",
  summary: "A map step's items in item order, a page at a time, with each one's status, attempt and output or error",
  security: BEARER_AUTH,
  request: { params: StepParamsSchema, query: ItemsQuerySchema },
  responses: { 200: jsonContent(MapItemsPageSchema, "One page; nextCursor is set when more follow"), ...errorResponses(400, 401, 404, 503) },
});

export const mapItemRoutes = new OpenAPIHono<AppEnv>().openapi(itemsRoute, async (c) => {
  const { id, stepId } = c.req.valid("param");
  const { status, cursor, limit = ITEMS_PAGE_DEFAULT } = c.req.valid("query");
  const page = await schedulerFor(c.env, c.get("tenant"), id).mapItems(stepId, { ...(status ? { status } : {}), cursor: Number(cursor ?? 0), limit });
  if (page === undefined) throw new ApiError(404, "not_found", `Workflow "${id}" has no map step "${stepId}".`);
  if ("ok" in page) throw noSuchWorkflow(id);
  return c.json(page, 200);
});
