// The routes as the OpenAPI document declares them, so tests that must cover every route (authentication,
// fuzzing) take their list from the document and a new route cannot slip past them.
import { exports } from "cloudflare:workers";
import { expect } from "vitest";

/** The parts of JSON Schema these tests read. */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: unknown;
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  /** A union told apart by a field (an action, by its `type`). */
  oneOf?: Schema[];
}

export interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema: Schema;
}

interface Operation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema>; securitySchemes?: Record<string, Record<string, unknown>> };
}

export interface Route {
  /** Upper case, as sent. */
  method: string;
  /** As the document writes it, with `{param}` placeholders. */
  path: string;
  /** `POST /v1/workflows/{id}/cancel`: the name tests use. */
  name: string;
  security: Record<string, string[]>[] | undefined;
  pathParams: Parameter[];
  queryParams: Parameter[];
  /** The JSON body schema, resolved, when the route takes a body. */
  body: Schema | undefined;
}

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options", "trace"]);

/** Every route of the v1 contract and its v1.1 and v1.2 additions, as OpenAPI writes it; the document must list exactly these. */
export const EXPECTED_ROUTES = [
  "GET /v1/workflows",
  "POST /v1/workflows",
  // v1.2: many starts in one request.
  "POST /v1/workflows/batch",
  "GET /v1/workflows/{id}",
  "GET /v1/workflows/{id}/history",
  "GET /v1/workflows/{id}/diagnosis",
  // v1.2: a long poll for the result.
  "GET /v1/workflows/{id}/result",
  // v1.2: a map's items, paged.
  "GET /v1/workflows/{id}/steps/{stepId}/items",
  // What one attempt sent and what came back.
  "GET /v1/workflows/{id}/steps/{stepId}/attempts/{n}",
  "POST /v1/workflows/{id}/cancel",
  "POST /v1/workflows/{id}/compensate",
  "POST /v1/workflows/{id}/steps/{stepId}/retry",
  "POST /v1/workflows/{id}/steps/{stepId}/skip",
  "POST /v1/workflows/{id}/events",
  "POST /v1/workflows/{id}/pause",
  "POST /v1/workflows/{id}/resume",
  "POST /v1/workflows/{id}/terminate",
  "POST /v1/workflows/{id}/redrive",
  "PUT /v1/definitions/{name}",
  "GET /v1/definitions",
  "GET /v1/definitions/{name}",
  // A name's versions, newest first (for the dashboard's definitions page).
  "GET /v1/definitions/{name}/versions",
  "GET /v1/definitions/{name}/versions/{version}",
  "POST /v1/schedules",
  "GET /v1/schedules",
  "GET /v1/schedules/{id}",
  "POST /v1/schedules/{id}/pause",
  "POST /v1/schedules/{id}/resume",
  "POST /v1/schedules/{id}/trigger",
  "DELETE /v1/schedules/{id}",
  "GET /v1/targets",
  "PUT /v1/webhooks/{id}",
  "GET /v1/webhooks",
  "GET /v1/webhooks/{id}",
  "DELETE /v1/webhooks/{id}",
  "GET /v1/webhooks/{id}/deliveries",
  "GET /v1/metrics",
  // The tenant's figures per minute, kept by the service.
  "GET /v1/metrics/series",
  // v1.2: the user's own workers pull from their pools.
  "POST /v1/pools/{pool}/tasks/poll",
  "GET /v1/pools",
  // v1.2: the STARTS queue's messages that could never start.
  "GET /v1/starts/dead-letters",
  // v1.2: bulk operations, each a durable job.
  "POST /v1/bulk",
  "GET /v1/bulk",
  "GET /v1/bulk/{id}",
  "POST /v1/tasks/{token}/heartbeat",
  "POST /v1/tasks/{token}/complete",
  "POST /v1/tasks/{token}/fail",
] as const;

export async function loadOpenApi(): Promise<OpenApiDocument> {
  const response = await exports.default.fetch("http://shepherd.test/openapi.json");
  if (response.status !== 200) throw new Error(`GET /openapi.json answered ${response.status}`);
  return (await response.json()) as OpenApiDocument;
}

export function resolveSchema(doc: OpenApiDocument, schema: Schema | undefined): Schema | undefined {
  if (schema?.$ref === undefined) return schema;
  const target = doc.components?.schemas?.[schema.$ref.replace("#/components/schemas/", "")];
  if (!target) throw new Error(`unresolved ${schema.$ref}`);
  return resolveSchema(doc, target);
}

/** Every operation in the document, in document order. */
export function routesOf(doc: OpenApiDocument): Route[] {
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, operation]) => {
        const parameters = operation.parameters ?? [];
        const json = operation.requestBody?.content?.["application/json"]?.schema;
        return {
          method: method.toUpperCase(),
          path,
          name: `${method.toUpperCase()} ${path}`,
          security: operation.security,
          pathParams: parameters.filter((p) => p.in === "path"),
          queryParams: parameters.filter((p) => p.in === "query"),
          body: resolveSchema(doc, json),
        };
      }),
  );
}

/** Task routes are authorised by the task token in their path, not by an API token. */
export const isTaskRoute = (route: Pick<Route, "path">): boolean => route.path.startsWith("/v1/tasks/");

/** The path with every `{param}` filled; a placeholder without a value is a test bug, so it throws. */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for path parameter {${name}} of ${path}`);
    return encodeURIComponent(value);
  });
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  body: any;
}

export async function toRawResponse(response: Response): Promise<RawResponse> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** A request exactly as given: no Authorization or Content-Type is added. */
export async function rawRequest(method: string, path: string, init: { headers?: HeadersInit; body?: BodyInit } = {}): Promise<RawResponse> {
  const response = await exports.default.fetch(`http://shepherd.test${path}`, { method, ...init });
  return toRawResponse(response);
}

/** Enough of a response to explain a failure without printing a megabyte. */
export function describeResponse(response: RawResponse): string {
  return `${response.status} ${response.text.slice(0, 300)}`;
}

/** The contract's error: `{error: {code, message, details?}}` with a snake_case code and a message to act on. */
export function expectErrorShape(response: RawResponse, status: number | number[], code?: string | RegExp, context = ""): void {
  const where = `${context} ${describeResponse(response)}`.trim();
  const statuses = Array.isArray(status) ? status : [status];
  expect(statuses, where).toContain(response.status);
  expect(response.headers.get("Content-Type") ?? "", where).toMatch(/^application\/json\b/);
  expect(response.body, where).toEqual({ error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }) });
  expect(Object.keys(response.body.error).every((key) => ["code", "message", "details"].includes(key)), where).toBe(true);
  expect(response.body.error.code, where).toMatch(code ?? /^[a-z]+(_[a-z]+)*$/);
  expect(response.body.error.message.length, where).toBeGreaterThan(0);
  if ("details" in response.body.error) expect(Array.isArray(response.body.error.details), where).toBe(true);
}
