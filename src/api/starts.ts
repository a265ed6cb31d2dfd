import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { LIST_PAGE_DEFAULT, LIST_PAGE_MAX } from "../domain/contract";
import { DeadLetterViewSchema } from "../starts/dead-letter";
import { decodeDeadLetterCursor, encodeDeadLetterCursor } from "../starts/dead-letter-cursor";
import { listDeadLetters, NO_TENANT } from "../starts/dead-letters-db";
import { deadLetterViewer } from "../starts/tenants";
import type { AppEnv } from "./app-env";
import { validationFailed } from "./errors";
import { BEARER_AUTH, errorResponses, jsonContent } from "./openapi-helpers";

const DeadLetterListSchema = z
  .object({
    deadLetters: z.array(DeadLetterViewSchema.openapi("StartDeadLetter")),
    nextCursor: z.string().optional().openapi({ description: "Set when more follow: the next page's cursor" }),
  })
  .openapi("StartDeadLetterList");

const ListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(LIST_PAGE_MAX).optional().openapi({ description: `Dead letters per page, at most ${LIST_PAGE_MAX} (default ${LIST_PAGE_DEFAULT})` }),
  cursor: z.string().min(1).max(1024).optional().openapi({ description: "A previous page's nextCursor" }),
});

const listRoute = createRoute({
  method: "get",
  path: "/v1/starts/dead-letters",
  operationId: "listStartDeadLetters",
  summary: "The STARTS queue's messages that could never start (a bad body, an unknown tenant, a refused start), with their errors, newest first",
  security: BEARER_AUTH,
  request: { query: ListQuerySchema },
  responses: { 200: jsonContent(DeadLetterListSchema, "One page; nextCursor is set when more follow"), ...errorResponses(400, 401, 503) },
});

/** A tenant sees its own dead letters, and the deployment's viewer also those of messages that named no tenant it has. */
export const startRoutes = new OpenAPIHono<AppEnv>().openapi(listRoute, async (c) => {
  const { limit = LIST_PAGE_DEFAULT, cursor } = c.req.valid("query");
  const after = cursor === undefined ? undefined : decodeDeadLetterCursor(cursor);
  if (cursor !== undefined && !after) throw validationFailed([{ code: "custom", path: ["cursor"], message: "is not a cursor this API returned" }]);
  const tenant = c.get("tenant");
  const owners = deadLetterViewer(c.env) === tenant ? [tenant, NO_TENANT] : [tenant];
  const page = await listDeadLetters(c.env.DB, owners, limit, after);
  return c.json({ deadLetters: page.deadLetters, ...(page.next ? { nextCursor: encodeDeadLetterCursor(page.next) } : {}) }, 200);
});
