import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { DefinitionSchema, definitionHash } from "../domain/language/definition";
import { LIST_PAGE_DEFAULT, LIST_PAGE_MAX } from "../domain/contract";
import { IdSchema } from "../domain/language/schemas";
import { decodeNameCursor, encodeNameCursor } from "../registry/cursor";
import { findDefinition, listLatestVersions, listVersions, publishDefinition } from "../registry/d1-registry";
import { checkDefinitionTargets } from "../admission/definition-targets";
import type { AppEnv } from "./app-env";
import { ApiError, rejectionToError, validationFailed } from "./errors";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";

const VERSION_FIELDS = {
  name: z.string(),
  version: z.number().int().openapi({ description: "1, 2, 3 … per name; a version never changes" }),
  hash: z.string().openapi({ description: "Hex SHA-256 of the definition's canonical JSON (keys sorted)" }),
  createdAt: z.number(),
};

const DefinitionVersionSchema = z.object(VERSION_FIELDS).openapi("DefinitionVersion");

// Its own object rather than an extension, so the document lists every field in one place (no allOf).
const PublishedDefinitionSchema = z.object({ ...VERSION_FIELDS, definition: DefinitionSchema }).openapi("PublishedDefinition");

const DefinitionListSchema = z
  .object({
    definitions: z.array(DefinitionVersionSchema).openapi({ description: "Each name once, with its latest version, in name order" }),
    nextCursor: z.string().optional(),
  })
  .openapi("DefinitionList");

const VersionListSchema = z
  .object({
    versions: z.array(DefinitionVersionSchema).openapi({ description: "The name's versions, newest first, without their content" }),
    nextCursor: z.string().optional(),
  })
  .openapi("DefinitionVersionList");

const NameParamsSchema = z.object({ name: IdSchema.openapi({ param: { name: "name", in: "path" } }) });

/** Digits only, so that "01", "1e0" or " 1" name no version: a path says one version in one way. */
const VersionParamsSchema = NameParamsSchema.extend({
  version: z
    .string()
    .regex(/^[1-9][0-9]{0,8}$/, "must be a version number (1, 2, 3 …)")
    .openapi({ param: { name: "version", in: "path" }, example: "1" }),
});

const ListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(LIST_PAGE_MAX).optional().openapi({ description: `Names per page, at most ${LIST_PAGE_MAX} (default ${LIST_PAGE_DEFAULT})` }),
  cursor: z.string().min(1).max(1024).optional().openapi({ description: "A previous page's nextCursor" }),
});

/** A page's last version number, as the versions list writes it: the next page holds the versions below it. */
const VERSION_CURSOR = /^[1-9][0-9]{0,8}$/;

const VersionListQuerySchema = z.strictObject({
  limit: ListQuerySchema.shape.limit.openapi({ description: `Versions per page, at most ${LIST_PAGE_MAX} (default ${LIST_PAGE_DEFAULT})` }),
  cursor: z.string().regex(VERSION_CURSOR, "is not a cursor this API returned").optional().openapi({ description: "A previous page's nextCursor" }),
});

const publishRoute = createRoute({
  method: "put",
  path: "/v1/definitions/{name}",
  operationId: "publishDefinition",
  summary: "Publish a definition under its name: new content becomes the next version, content already published answers its version",
  security: BEARER_AUTH,
  request: { params: NameParamsSchema, ...jsonBody(DefinitionSchema) },
  responses: {
    201: jsonContent(DefinitionVersionSchema, "Stored as a new version"),
    200: jsonContent(DefinitionVersionSchema, "The same content as this version, which already exists: nothing stored"),
    ...errorResponses(400, 401, 413, 415, 429, 503),
  },
});

const listRoute = createRoute({
  method: "get",
  path: "/v1/definitions",
  operationId: "listDefinitions",
  summary: "List the caller's definitions by name, each with its latest version",
  security: BEARER_AUTH,
  request: { query: ListQuerySchema },
  responses: { 200: jsonContent(DefinitionListSchema, "One page; nextCursor is set when more follow"), ...errorResponses(400, 401, 503) },
});

const latestRoute = createRoute({
  method: "get",
  path: "/v1/definitions/{name}",
  operationId: "getDefinition",
  summary: "The latest version of a definition, with its content",
  security: BEARER_AUTH,
  request: { params: NameParamsSchema },
  responses: { 200: jsonContent(PublishedDefinitionSchema, "The latest version"), ...errorResponses(400, 401, 404, 503) },
});

const versionsRoute = createRoute({
  method: "get",
  path: "/v1/definitions/{name}/versions",
  operationId: "listDefinitionVersions",
  summary: "List a definition's versions, newest first, each with its hash and when it was published",
  security: BEARER_AUTH,
  request: { params: NameParamsSchema, query: VersionListQuerySchema },
  responses: { 200: jsonContent(VersionListSchema, "One page; nextCursor is set when older versions follow"), ...errorResponses(400, 401, 404, 503) },
});

const versionRoute = createRoute({
  method: "get",
  path: "/v1/definitions/{name}/versions/{version}",
  operationId: "getDefinitionVersion",
  summary: "One version of a definition, with its content",
  security: BEARER_AUTH,
  request: { params: VersionParamsSchema },
  responses: { 200: jsonContent(PublishedDefinitionSchema, "That version"), ...errorResponses(400, 401, 404, 503) },
});

export const definitionRoutes = new OpenAPIHono<AppEnv>()
  .openapi(publishRoute, async (c) => {
    const { name } = c.req.valid("param");
    const definition = c.req.valid("json");
    if (definition.name !== name) {
      throw validationFailed([{ code: "custom", path: ["name"], message: `must be "${name}", the name in the path (got "${definition.name}")` }]);
    }
    const refusal = checkDefinitionTargets(c.env, c.get("tenant"), definition, []);
    if (refusal) throw rejectionToError(refusal);
    const published = await publishDefinition(c.env.DB, c.get("tenant"), definition, await definitionHash(definition), Date.now());
    return c.json(published.version, published.created ? 201 : 200);
  })
  .openapi(listRoute, async (c) => {
    const { limit = LIST_PAGE_DEFAULT, cursor } = c.req.valid("query");
    const afterName = cursor === undefined ? undefined : decodeNameCursor(cursor);
    if (cursor !== undefined && !afterName) {
      throw validationFailed([{ code: "custom", path: ["cursor"], message: "is not a cursor this API returned" }]);
    }
    const page = await listLatestVersions(c.env.DB, c.get("tenant"), { limit, afterName });
    return c.json({ definitions: page.definitions, ...(page.next ? { nextCursor: encodeNameCursor(page.next) } : {}) }, 200);
  })
  .openapi(latestRoute, async (c) => {
    const { name } = c.req.valid("param");
    const found = await findDefinition(c.env.DB, c.get("tenant"), name);
    if (!found) throw new ApiError(404, "not_found", `No definition "${name}".`);
    return c.json(found, 200);
  })
  .openapi(versionsRoute, async (c) => {
    const { name } = c.req.valid("param");
    const { limit = LIST_PAGE_DEFAULT, cursor } = c.req.valid("query");
    const page = await listVersions(c.env.DB, c.get("tenant"), name, { limit, beforeVersion: cursor === undefined ? undefined : Number(cursor) });
    // A first page with nothing on it: the name was never published (a later page may be empty, as any list's).
    if (cursor === undefined && page.versions.length === 0) throw new ApiError(404, "not_found", `No definition "${name}".`);
    return c.json({ versions: page.versions, ...(page.next === undefined ? {} : { nextCursor: String(page.next) }) }, 200);
  })
  .openapi(versionRoute, async (c) => {
    const { name, version } = c.req.valid("param");
    const found = await findDefinition(c.env.DB, c.get("tenant"), name, Number(version));
    if (!found) throw new ApiError(404, "not_found", `No version ${version} of definition "${name}".`);
    return c.json(found, 200);
  });
