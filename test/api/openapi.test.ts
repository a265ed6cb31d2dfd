import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";

/** The parts of JSON Schema and OpenAPI 3.1 these tests read. */
interface Schema {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  pattern?: string;
  additionalProperties?: unknown;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

interface Content {
  content?: Record<string, { schema?: Schema }>;
}

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema: Schema }[];
  requestBody?: Content & { required?: boolean };
  responses: Record<string, Content>;
}

interface OpenApiDocument {
  openapi: string;
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$";

/** Every route of the v1 contract, as OpenAPI writes its path. */
const CONTRACT_ROUTES: [method: string, path: string][] = [
  ["post", "/v1/workflows"],
  ["get", "/v1/workflows/{id}"],
  ["get", "/v1/workflows/{id}/history"],
  ["post", "/v1/workflows/{id}/cancel"],
  ["post", "/v1/workflows/{id}/compensate"],
  ["post", "/v1/workflows/{id}/steps/{stepId}/retry"],
  ["post", "/v1/workflows/{id}/steps/{stepId}/skip"],
  ["post", "/v1/tasks/{token}/heartbeat"],
  ["post", "/v1/tasks/{token}/complete"],
  ["post", "/v1/tasks/{token}/fail"],
  // v1.1: events and workflow control.
  ["post", "/v1/workflows/{id}/events"],
  ["post", "/v1/workflows/{id}/pause"],
  ["post", "/v1/workflows/{id}/resume"],
  ["post", "/v1/workflows/{id}/terminate"],
  ["post", "/v1/workflows/{id}/redrive"],
  // v1.1: supervision.
  ["get", "/v1/workflows/{id}/diagnosis"],
  // v1.1: the definitions registry.
  ["put", "/v1/definitions/{name}"],
  ["get", "/v1/definitions"],
  ["get", "/v1/definitions/{name}"],
  ["get", "/v1/definitions/{name}/versions/{version}"],
  // v1.1: cron schedules.
  ["post", "/v1/schedules"],
  ["get", "/v1/schedules"],
  ["get", "/v1/schedules/{id}"],
  ["post", "/v1/schedules/{id}/pause"],
  ["post", "/v1/schedules/{id}/resume"],
  ["post", "/v1/schedules/{id}/trigger"],
  ["delete", "/v1/schedules/{id}"],
  // v1.1: outbound events (webhooks).
  ["put", "/v1/webhooks/{id}"],
  ["get", "/v1/webhooks"],
  ["get", "/v1/webhooks/{id}"],
  ["delete", "/v1/webhooks/{id}"],
  ["get", "/v1/webhooks/{id}/deliveries"],
  // v1.1: metrics.
  ["get", "/v1/metrics"],
  ["get", "/v1/metrics/series"],
  // v1.1: circuit breakers.
  ["get", "/v1/targets"],
  // v1.2: a map's items.
  ["get", "/v1/workflows/{id}/steps/{stepId}/items"],
  // v1.2: worker pools.
  ["post", "/v1/pools/{pool}/tasks/poll"],
  ["get", "/v1/pools"],
  // v1.2: the STARTS queue's dead letters.
  ["get", "/v1/starts/dead-letters"],
  // v1.2: the result, by long poll.
  ["get", "/v1/workflows/{id}/result"],
  // v1.2: bulk operations.
  ["post", "/v1/bulk"],
  ["get", "/v1/bulk"],
  ["get", "/v1/bulk/{id}"],
  // v1.2: many starts in one request.
  ["post", "/v1/workflows/batch"],
  // A definition's versions, for the dashboard's definitions page.
  ["get", "/v1/definitions/{name}/versions"],
  // What one attempt sent and what came back.
  ["get", "/v1/workflows/{id}/steps/{stepId}/attempts/{n}"],
];

let doc: OpenApiDocument;
let contentType: string | null;
let status: number;

beforeAll(async () => {
  const response = await exports.default.fetch("http://shepherd.test/openapi.json");
  status = response.status;
  contentType = response.headers.get("Content-Type");
  doc = (await response.json()) as OpenApiDocument;
});

/** Follows a `$ref` into the document's components. */
function resolve(schema: Schema | undefined): Schema {
  expect(schema).toBeDefined();
  const ref = schema?.$ref;
  if (ref === undefined) return schema as Schema;
  const name = ref.replace("#/components/schemas/", "");
  const target = doc.components?.schemas?.[name];
  expect(target, `unresolved ${ref}`).toBeDefined();
  return resolve(target);
}

function operation(method: string, path: string): Operation {
  const found = doc.paths[path]?.[method];
  expect(found, `${method.toUpperCase()} ${path} is not documented`).toBeDefined();
  return found as Operation;
}

function jsonSchemaOf(content: Content | undefined, what: string): Schema {
  const json = content?.content?.["application/json"];
  expect(json, `${what} documents no JSON body`).toBeDefined();
  return resolve(json?.schema);
}

function requestBodySchema(method: string, path: string): Schema {
  return jsonSchemaOf(operation(method, path).requestBody, `${method.toUpperCase()} ${path}`);
}

function responseSchema(method: string, path: string, status: string): Schema {
  return jsonSchemaOf(operation(method, path).responses[status], `${method.toUpperCase()} ${path} ${status}`);
}

function property(schema: Schema, ...names: string[]): Schema {
  return names.reduce((current, name) => {
    const next = resolve(current).properties?.[name];
    expect(next, `no property ${name}`).toBeDefined();
    return resolve(next);
  }, schema);
}

describe("GET /openapi.json", () => {
  it("serves an OpenAPI 3.1 document as JSON", () => {
    expect(status).toBe(200);
    expect(contentType).toMatch(/^application\/json/);
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  });

  it.each(CONTRACT_ROUTES)("documents %s %s", (method, path) => {
    const documented = operation(method, path);

    expect(Object.keys(documented.responses ?? {}).length).toBeGreaterThan(0);
  });

  it.each(CONTRACT_ROUTES.filter(([, path]) => path.includes("{")))("declares the path parameters of %s %s", (method, path) => {
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
    const parameters = operation(method, path).parameters ?? [];

    for (const name of names) {
      expect(parameters).toContainEqual(expect.objectContaining({ name, in: "path", required: true }));
    }
  });

  /** Every operation of the document, by method and path. */
  const operations = () => Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })));

  it("names every operation with an operationId, a camelCase verb phrase that no other operation has", () => {
    const ids = operations().map(({ route, op }) => [route, op.operationId] as const);

    for (const [route, id] of ids) expect(id, `${route} has no operationId`).toMatch(/^[a-z]+[A-Za-z]*$/);
    const seen = new Map<string, string>();
    for (const [route, id] of ids) {
      expect(seen.get(id ?? ""), `${route} reuses the operationId ${id}`).toBeUndefined();
      seen.set(id ?? "", route);
    }
  });

  it("keeps the operationIds clients were generated with", () => {
    expect(operation("post", "/v1/pools/{pool}/tasks/poll").operationId).toBe("pollTasks");
    expect(operation("get", "/v1/pools").operationId).toBe("listPools");
    expect(operation("post", "/v1/workflows").operationId).toBe("startWorkflow");
    expect(operation("get", "/v1/workflows/{id}").operationId).toBe("getWorkflow");
    expect(operation("get", "/v1/workflows").operationId).toBe("listWorkflows");
  });

  it("declares every operation's security: the bearer token, or explicitly none where the task token in the path is the credential", () => {
    for (const { route, op } of operations()) {
      expect(op.security, `${route} declares no security`).toBeDefined();
      if (route.includes(" /v1/tasks/")) expect(op.security, route).toEqual([]);
      else expect(op.security, route).toEqual([{ bearerAuth: [] }]);
    }
  });

  it("names the origin it was read from as its server, so the reference's sample requests run as shown", () => {
    expect(doc.servers).toEqual([{ url: "http://shepherd.test", description: expect.any(String) }]);
  });

  it("gives workflow and step ids in paths the contract's id pattern", () => {
    const parameters = operation("post", "/v1/workflows/{id}/steps/{stepId}/retry").parameters ?? [];

    expect(parameters.find((parameter) => parameter.name === "id")?.schema.pattern).toBe(ID_PATTERN);
    expect(parameters.find((parameter) => parameter.name === "stepId")?.schema.pattern).toBe(ID_PATTERN);
  });
});

describe("the start request in the OpenAPI document", () => {
  it("takes a definition or a definitionRef (exactly one, checked by the API) and an optional id in the contract's format", () => {
    const body = requestBodySchema("post", "/v1/workflows");

    // Neither is required by the shape: "exactly one of the two" is a 400 naming the problem.
    expect(body.required ?? []).toEqual([]);
    expect(Object.keys(body.properties ?? {})).toEqual(expect.arrayContaining(["id", "definition", "definitionRef", "input"]));
    expect(property(body, "id").pattern).toBe(ID_PATTERN);
    expect(body.additionalProperties).toBe(false);
  });

  it("describes a definitionRef as a name with an optional version of 1 or more", () => {
    const ref = property(requestBodySchema("post", "/v1/workflows"), "definitionRef");

    expect(ref.required).toEqual(["name"]);
    expect(property(ref, "name").pattern).toBe(ID_PATTERN);
    expect(property(ref, "version")).toMatchObject({ type: "integer", minimum: 1 });
    expect(ref.additionalProperties).toBe(false);
  });

  it("requires a definition's name and 1 to 200 steps", () => {
    const definition = property(requestBodySchema("post", "/v1/workflows"), "definition");
    const steps = property(definition, "steps");

    expect(definition.required).toEqual(expect.arrayContaining(["name", "steps"]));
    expect(steps).toMatchObject({ type: "array", minItems: 1, maxItems: 200 });
  });

  it("requires each step's id, offers the three step kinds and when, and refuses unknown step fields", () => {
    const step = resolve(property(requestBodySchema("post", "/v1/workflows"), "definition", "steps").items);

    expect(step.required).toContain("id");
    // Exactly one kind is a rule across fields, checked by the definition (400 naming the step), not by the shape.
    for (const optional of ["dependsOn", "action", "sleep", "waitForEvent", "when"]) expect(step.required ?? []).not.toContain(optional);
    expect(property(step, "id").pattern).toBe(ID_PATTERN);
    expect(Object.keys(step.properties ?? {})).toEqual(
      expect.arrayContaining(["id", "dependsOn", "when", "action", "sleep", "waitForEvent", "retry", "timeouts", "compensate"]),
    );
    expect(resolve(property(step, "waitForEvent")).required).toEqual(expect.arrayContaining(["event", "timeoutMs"]));
    expect(step.additionalProperties).toBe(false);
  });

  it("describes an action as one of its types, told apart by type: http, with its type, url and method", () => {
    const step = resolve(property(requestBodySchema("post", "/v1/workflows"), "definition", "steps").items);
    const types = (property(step, "action").oneOf ?? []).map(resolve);
    const http = types.find((member) => property(member, "type").enum?.includes("http") || property(member, "type").const === "http");
    expect(http, "no http member among the action types").toBeDefined();
    const action = http as Schema;

    expect(action.required).toEqual(expect.arrayContaining(["type", "url"]));
    expect(property(action, "type").enum ?? [property(action, "type").const]).toEqual(["http"]);
    expect(property(action, "method").enum).toEqual(expect.arrayContaining(["GET", "POST"]));
  });

  it("carries the retry policy's bounds", () => {
    const step = resolve(property(requestBodySchema("post", "/v1/workflows"), "definition", "steps").items);

    expect(property(step, "retry", "maxAttempts")).toMatchObject({ type: "integer", minimum: 1 });
    expect(property(step, "retry", "jitter")).toMatchObject({ minimum: 0, maximum: 1 });
    expect(property(step, "timeouts", "heartbeatMs")).toMatchObject({ type: "integer", minimum: 1 });
  });

  it("carries the circuit breaker's settings and bounds, on a step and in the defaults", () => {
    const definition = property(requestBodySchema("post", "/v1/workflows"), "definition");
    const step = resolve(property(definition, "steps").items);

    for (const breaker of [property(step, "breaker"), property(definition, "defaults", "breaker")]) {
      expect(property(breaker, "failures")).toMatchObject({ type: "integer", minimum: 1, maximum: 100 });
      expect(property(breaker, "openMs")).toMatchObject({ type: "integer", minimum: 1_000, maximum: 300_000 });
      expect(breaker.additionalProperties).toBe(false);
    }
  });

  it("lists onFailure's three choices, and an escalation with a deadline and its default actions", () => {
    const definition = property(requestBodySchema("post", "/v1/workflows"), "definition");
    const [word, escalation] = (property(definition, "onFailure").anyOf ?? []).map(resolve);

    expect(word?.enum).toEqual(expect.arrayContaining(["compensate", "escalate", "fail"]));
    const escalate = property(escalation!, "escalate");
    expect(escalate.required).toEqual(expect.arrayContaining(["afterMs", "then"]));
    expect(property(escalate, "then").enum).toEqual(["compensate", "fail", "skip", "retry"]);
  });
});

describe("the definitions registry in the OpenAPI document", () => {
  it("takes a whole definition as the body of PUT /v1/definitions/{name}", () => {
    const body = requestBodySchema("put", "/v1/definitions/{name}");

    expect(body.required).toEqual(expect.arrayContaining(["name", "steps"]));
    expect(property(body, "name").pattern).toBe(ID_PATTERN);
    expect(body.additionalProperties).toBe(false);
  });

  it("answers a publish with the version: 201 for new content, 200 for content already published", () => {
    const responses = operation("put", "/v1/definitions/{name}").responses;

    expect(Object.keys(responses)).toEqual(expect.arrayContaining(["200", "201", "400", "415"]));
    expect(responseSchema("put", "/v1/definitions/{name}", "201").required).toEqual(expect.arrayContaining(["name", "version", "hash", "createdAt"]));
  });

  it("answers a read of one version with its content, and documents 404", () => {
    for (const path of ["/v1/definitions/{name}", "/v1/definitions/{name}/versions/{version}"]) {
      const published = responseSchema("get", path, "200");
      expect(published.required, path).toEqual(expect.arrayContaining(["name", "version", "hash", "createdAt", "definition"]));
      expect(Object.keys(operation("get", path).responses), path).toContain("404");
    }
  });

  it("lists names with their latest version, paged by cursor", () => {
    const list = responseSchema("get", "/v1/definitions", "200");
    const parameters = operation("get", "/v1/definitions").parameters ?? [];

    expect(resolve(property(list, "definitions").items).required).toEqual(expect.arrayContaining(["name", "version", "hash", "createdAt"]));
    expect(parameters.map((parameter) => parameter.name)).toEqual(expect.arrayContaining(["limit", "cursor"]));
  });

  it("lists a name's versions without their content, paged by cursor, and documents 404", () => {
    const list = responseSchema("get", "/v1/definitions/{name}/versions", "200");
    const listed = resolve(property(list, "versions").items);
    const parameters = operation("get", "/v1/definitions/{name}/versions").parameters ?? [];

    expect(listed.required).toEqual(expect.arrayContaining(["name", "version", "hash", "createdAt"]));
    expect(Object.keys(listed.properties ?? {})).not.toContain("definition");
    expect(parameters.map((parameter) => parameter.name)).toEqual(expect.arrayContaining(["name", "limit", "cursor"]));
    expect(Object.keys(operation("get", "/v1/definitions/{name}/versions").responses)).toContain("404");
  });
});

describe("the workflow list in the OpenAPI document", () => {
  it("takes the created range and an id prefix beside its filters and its page", () => {
    const parameters = operation("get", "/v1/workflows").parameters ?? [];
    const named = (name: string) => parameters.find((parameter) => parameter.name === name);

    expect(parameters.map((parameter) => [parameter.name, parameter.in, parameter.required ?? false])).toEqual(
      ["status", "name", "parentId", "createdAfter", "createdBefore", "idPrefix", "limit", "cursor"].map((name) => [name, "query", false]),
    );
    expect(named("createdAfter")?.schema.pattern).toBe(named("createdBefore")?.schema.pattern);
    expect(new RegExp(named("createdAfter")?.schema.pattern ?? "").test("2024-05-01T12:00:00Z")).toBe(true);
    expect(named("idPrefix")?.schema.pattern).toBe(ID_PATTERN);
  });

  it("describes each row with when it ended and, for one worth a look, its line, step, attempts and next deadline", () => {
    const row = resolve(property(responseSchema("get", "/v1/workflows", "200"), "workflows").items);

    expect(row.required).toEqual(expect.arrayContaining(["id", "name", "status", "createdAt", "updatedAt"]));
    for (const optional of ["endedAt", "summary", "stepId", "attempts", "nextDeadlineAt"]) expect(row.required ?? [], optional).not.toContain(optional);
    expect(property(row, "attempts").required).toEqual(["used", "max"]);
    expect(property(row, "summary").type).toBe("string");
  });
});

describe("the schedules in the OpenAPI document", () => {
  it("takes an id, a cron, a workflow and the optional time zone, overlap, catch-up window and paused flag", () => {
    const body = requestBodySchema("post", "/v1/schedules");

    expect(body.required).toEqual(expect.arrayContaining(["id", "cron", "workflow"]));
    expect(body.required).toHaveLength(3);
    expect(Object.keys(body.properties ?? {})).toEqual(expect.arrayContaining(["timezone", "overlap", "catchupWindowMs", "paused"]));
    expect(property(body, "overlap").enum).toEqual(["skip", "buffer_one", "cancel_previous", "allow"]);
    expect(Object.keys(property(body, "workflow").properties ?? {})).toEqual(expect.arrayContaining(["definition", "definitionRef", "input"]));
    expect(body.additionalProperties).toBe(false);
  });

  it("answers a create with 201, a repeat with 200 and another body for the id with 409", () => {
    expect(Object.keys(operation("post", "/v1/schedules").responses)).toEqual(expect.arrayContaining(["200", "201", "400", "409"]));
  });

  it("describes a schedule with the contract's fields and its recent fires' outcomes", () => {
    const schedule = responseSchema("get", "/v1/schedules/{id}", "200");
    const fire = resolve(property(schedule, "recent").items);

    expect(schedule.required).toEqual(expect.arrayContaining(["id", "cron", "timezone", "overlap", "paused", "nextFireAt", "recent"]));
    expect(fire.required).toEqual(expect.arrayContaining(["at", "outcome"]));
    expect(property(fire, "outcome").enum).toEqual(["started", "delayed", "skipped_overlap", "buffered", "missed", "failed"]);
    expect(Object.keys(operation("get", "/v1/schedules/{id}").responses)).toContain("404");
  });
});

describe("the metrics in the OpenAPI document", () => {
  it("describes the JSON figures and offers Prometheus' text format as text/plain", () => {
    const metrics = responseSchema("get", "/v1/metrics", "200");

    expect(metrics.required).toEqual(expect.arrayContaining(["workflows", "steps", "compensations", "escalations", "detectionLatenessMs", "asOf"]));
    expect(property(metrics, "steps").required).toEqual(expect.arrayContaining(["attempts", "retries", "timeouts"]));
    expect(property(metrics, "detectionLatenessMs").required).toEqual(expect.arrayContaining(["count", "p50", "p99", "max"]));
    expect(Object.keys(operation("get", "/v1/metrics").responses["200"]?.content ?? {})).toEqual(["application/json", "text/plain"]);
    expect(Object.keys(operation("get", "/v1/metrics").responses)).toContain("401");
  });

  it("describes the series: its range, a point per step with every outcome and counter, and the range's total", () => {
    const series = responseSchema("get", "/v1/metrics/series", "200");
    const point = resolve(property(series, "series").items);
    const fields = ["started", "completed", "failed", "compensated", "cancelled", "terminated", "attempts", "retries", "timeouts", "compensations", "escalations", "detectionLatenessMs", "queueLagMs"];

    expect(operation("get", "/v1/metrics/series").operationId).toBe("getMetricsSeries");
    expect(series.required).toEqual(expect.arrayContaining(["from", "to", "stepMs", "series", "total"]));
    expect(point.required).toEqual(expect.arrayContaining(["at", ...fields]));
    expect(resolve(property(series, "total")).required).toEqual(expect.arrayContaining(fields));
    const parameters = operation("get", "/v1/metrics/series").parameters ?? [];
    expect(parameters.map((parameter) => [parameter.name, parameter.in, parameter.required ?? false])).toEqual([
      ["from", "query", false],
      ["to", "query", false],
      ["stepMs", "query", false],
    ]);
    expect(parameters.find((parameter) => parameter.name === "stepMs")?.schema).toMatchObject({ type: "integer", minimum: 60_000, maximum: 86_400_000, multipleOf: 60_000 });
    expect(Object.keys(operation("get", "/v1/metrics/series").responses)).toEqual(expect.arrayContaining(["200", "400", "401", "503"]));
  });
});

describe("the webhooks in the OpenAPI document", () => {
  it("takes a url and event filters, and an optional secret in the Standard Webhooks format", () => {
    const body = requestBodySchema("put", "/v1/webhooks/{id}");

    expect(body.required).toEqual(expect.arrayContaining(["url", "events"]));
    expect(body.required).toHaveLength(2);
    expect(property(body, "secret").pattern).toMatch(/^\^whsec_/);
    expect(property(body, "events").minItems).toBe(1);
    expect(body.additionalProperties).toBe(false);
    expect(Object.keys(operation("put", "/v1/webhooks/{id}").responses)).toEqual(expect.arrayContaining(["200", "201", "400", "409"]));
  });

  it("shows a secret only in the answer to a PUT, and lists deliveries with their status and attempts", () => {
    expect(Object.keys(responseSchema("put", "/v1/webhooks/{id}", "201").properties ?? {})).toContain("secret");
    expect(Object.keys(responseSchema("get", "/v1/webhooks/{id}", "200").properties ?? {})).not.toContain("secret");
    const delivery = resolve(property(responseSchema("get", "/v1/webhooks/{id}/deliveries", "200"), "deliveries").items);

    expect(delivery.required).toEqual(expect.arrayContaining(["eventId", "type", "workflowId", "status", "attempts", "firstAt", "lastAt"]));
    expect(property(delivery, "status").enum).toEqual(["delivered", "failing", "failed"]);
    expect(Object.keys(operation("get", "/v1/webhooks/{id}/deliveries").responses)).toContain("404");
  });
});

describe("the bulk jobs in the OpenAPI document", () => {
  it("takes an action, a filter of the contract's fields (and the list's idPrefix), an optional reason and an event", () => {
    const body = requestBodySchema("post", "/v1/bulk");

    expect(body.required).toEqual(["action", "filter"]);
    expect(property(body, "action").enum).toEqual(["cancel", "terminate", "redrive", "pause", "resume", "event"]);
    expect(Object.keys(property(body, "filter").properties ?? {}).sort()).toEqual(["createdAfter", "createdBefore", "idPrefix", "ids", "name", "parentId", "status"]);
    expect(property(body, "filter", "ids").maxItems).toBe(1000);
    expect(property(body, "event").required).toEqual(["event"]);
    expect(body.properties).toHaveProperty("reason");
    expect(body.properties).toHaveProperty("id");
  });

  it("answers the same request under the same id with 200 and the job, another with 409", () => {
    expect(responseSchema("post", "/v1/bulk", "200")).toEqual(responseSchema("post", "/v1/bulk", "202"));
    expect(Object.keys(operation("post", "/v1/bulk").responses)).toContain("409");
  });

  it("answers a start with 202 and the job, whose status is running or done, with its counts and errors", () => {
    const job = responseSchema("post", "/v1/bulk", "202");

    expect(job.required).toEqual(expect.arrayContaining(["id", "action", "status", "matched", "done", "failed", "errors"]));
    expect(property(job, "status").enum).toEqual(["running", "done"]);
    expect(resolve(property(job, "errors").items).required).toEqual(["workflowId", "code", "message"]);
    expect(responseSchema("get", "/v1/bulk/{id}", "200")).toEqual(job);
    expect(Object.keys(operation("get", "/v1/bulk/{id}").responses)).toContain("404");
    expect(resolve(property(responseSchema("get", "/v1/bulk", "200"), "jobs").items)).toEqual(job);
  });

  it("names the operations startBulkJob, getBulkJob and listBulkJobs", () => {
    expect([operation("post", "/v1/bulk").operationId, operation("get", "/v1/bulk/{id}").operationId, operation("get", "/v1/bulk").operationId]).toEqual(["startBulkJob", "getBulkJob", "listBulkJobs"]);
  });
});

describe("the other request bodies in the OpenAPI document", () => {
  it("documents skip's optional output", () => {
    const body = requestBodySchema("post", "/v1/workflows/{id}/steps/{stepId}/skip");

    expect(body.properties).toHaveProperty("output");
    expect(body.required ?? []).not.toContain("output");
  });

  it("documents a heartbeat's optional progress", () => {
    const body = requestBodySchema("post", "/v1/tasks/{token}/heartbeat");

    expect(body.properties).toHaveProperty("progress");
    expect(body.required ?? []).toEqual([]);
  });

  it("documents a completion's optional output", () => {
    const body = requestBodySchema("post", "/v1/tasks/{token}/complete");

    expect(body.properties).toHaveProperty("output");
    expect(body.required ?? []).toEqual([]);
  });

  it("requires a failure's error with a message and an optional retryable flag", () => {
    const body = requestBodySchema("post", "/v1/tasks/{token}/fail");
    const error = property(body, "error");

    expect(body.required).toEqual(["error"]);
    expect(error.required).toEqual(["message"]);
    expect(property(error, "retryable").type).toBe("boolean");
  });
});

describe("scheduled starts and the batch in the OpenAPI document", () => {
  it("takes startAt (epoch ms or an ISO 8601 string) or startDelayMs (at most 365 days) on a start", () => {
    const body = requestBodySchema("post", "/v1/workflows");

    const startAt = property(body, "startAt") as Schema & { anyOf?: Schema[] };
    expect((startAt.anyOf ?? []).map((member) => member.type).sort()).toEqual(["integer", "string"]);
    expect(property(body, "startDelayMs")).toMatchObject({ type: "integer", minimum: 0, maximum: 365 * 24 * 60 * 60 * 1000 });
  });

  it("lists scheduled among the statuses, and a workflow's startAt", () => {
    const workflow = responseSchema("get", "/v1/workflows/{id}", "200");

    expect(property(workflow, "status").enum).toContain("scheduled");
    expect(property(workflow, "startAt").type).toBe("number");
    expect(property(resolve(property(responseSchema("get", "/v1/workflows", "200"), "workflows").items), "startAt").type).toBe("number");
  });

  it("declares the batch as startWorkflowsBatch: 1 to 100 start bodies in, each item's answer out", () => {
    const batch = operation("post", "/v1/workflows/batch") as Operation & { operationId?: string };
    const workflows = property(requestBodySchema("post", "/v1/workflows/batch"), "workflows") as Schema & { items?: Schema & { allOf?: Schema[] } };
    const result = resolve(property(responseSchema("post", "/v1/workflows/batch", "200"), "results").items);

    expect(batch.operationId).toBe("startWorkflowsBatch");
    expect(workflows).toMatchObject({ type: "array", minItems: 1, maxItems: 100 });
    expect(resolve(workflows.items?.allOf?.[0])).toBe(requestBodySchema("post", "/v1/workflows"));
    expect(result.required).toEqual(expect.arrayContaining(["index", "status"]));
    expect(Object.keys(result.properties ?? {})).toEqual(expect.arrayContaining(["workflow", "error"]));
  });
});

describe("the responses in the OpenAPI document", () => {
  it("documents 201 for a new workflow, 200 for a repeated start and 409 for a conflicting one", () => {
    const responses = operation("post", "/v1/workflows").responses;

    expect(Object.keys(responses)).toEqual(expect.arrayContaining(["200", "201", "400", "409", "415"]));
  });

  it("describes a workflow with the fields the contract lists", () => {
    const workflow = responseSchema("get", "/v1/workflows/{id}", "200");
    const step = resolve(property(workflow, "steps").items);

    expect(property(workflow, "definition").required).toEqual(expect.arrayContaining(["name", "hash"]));

    expect(workflow.required).toEqual(expect.arrayContaining(["id", "name", "status", "createdAt", "updatedAt", "steps"]));
    expect(property(workflow, "status").enum).toEqual(
      expect.arrayContaining(["running", "compensating", "needs_attention", "completed", "failed", "compensated", "cancelled"]),
    );
    expect(Object.keys(step.properties ?? {})).toEqual(
      expect.arrayContaining(["id", "status", "attempt", "output", "error", "nextRetryAt", "lastHeartbeatAt", "progress", "attempts"]),
    );
  });

  it("describes the history as ordered events", () => {
    const history = responseSchema("get", "/v1/workflows/{id}/history", "200");
    const event = resolve(property(history, "events").items);

    expect(event.required).toEqual(expect.arrayContaining(["seq", "at", "type"]));
    expect(Object.keys(event.properties ?? {})).toEqual(expect.arrayContaining(["stepId", "attempt", "data"]));
  });

  it("describes 202 for the operator actions", () => {
    for (const path of ["/v1/workflows/{id}/cancel", "/v1/workflows/{id}/compensate", "/v1/workflows/{id}/steps/{stepId}/retry", "/v1/workflows/{id}/steps/{stepId}/skip"]) {
      expect(Object.keys(operation("post", path).responses), path).toContain("202");
    }
  });

  it("describes heartbeat's reply with cancelRequested", () => {
    const reply = responseSchema("post", "/v1/tasks/{token}/heartbeat", "200");

    expect(property(reply, "cancelRequested").type).toBe("boolean");
  });

  it("gives every error response the contract's error shape", () => {
    for (const [method, path] of CONTRACT_ROUTES) {
      for (const code of Object.keys(operation(method, path).responses)) {
        if (Number(code) < 400) continue;
        const shape = responseSchema(method, path, code);
        const error = property(shape, "error");
        expect(error.required, `${method} ${path} ${code}`).toEqual(expect.arrayContaining(["code", "message"]));
        expect(error.properties, `${method} ${path} ${code}`).toHaveProperty("details");
      }
    }
  });
});

describe("the result and the end's notice in the OpenAPI document", () => {
  it("takes a start's notify: a url and an optional secret in the Standard Webhooks format, nothing else", () => {
    const notify = property(requestBodySchema("post", "/v1/workflows"), "notify");

    expect(notify.required).toEqual(["url"]);
    expect(property(notify, "url")).toMatchObject({ type: "string", minLength: 1, maxLength: 2048 });
    expect(property(notify, "secret").pattern).toMatch(/^\^whsec_/);
    expect(notify.additionalProperties).toBe(false);
  });

  it("shows a workflow's notify as its url and whether it is signed, never the secret", () => {
    const notify = property(responseSchema("get", "/v1/workflows/{id}", "200"), "notify");

    expect(Object.keys(notify.properties ?? {}).sort()).toEqual(["signed", "url"]);
  });

  it("documents getWorkflowResult: waitMs up to a minute, 200 once ended with the output or error, 202 with the status before", () => {
    const result = operation("get", "/v1/workflows/{id}/result");
    const waitMs = (result.parameters ?? []).find((parameter) => parameter.name === "waitMs");

    expect(result.operationId).toBe("getWorkflowResult");
    expect(waitMs).toMatchObject({ in: "query", schema: { minimum: 0, maximum: 60_000 } });
    expect([waitMs?.schema.type].flat()).toContain("integer");
    expect(waitMs?.required ?? false).toBe(false);
    expect(Object.keys(responseSchema("get", "/v1/workflows/{id}/result", "200").properties ?? {}).sort()).toEqual(["error", "id", "output", "status"]);
    expect(responseSchema("get", "/v1/workflows/{id}/result", "202").required?.sort()).toEqual(["id", "status"]);
    expect(Object.keys(result.responses)).toEqual(expect.arrayContaining(["200", "202", "400", "401", "404"]));
  });
});

describe("an attempt's exchange in the OpenAPI document", () => {
  const path = "/v1/workflows/{id}/steps/{stepId}/attempts/{n}";

  it("documents getAttempt: the attempt with its request, response and verify call, each body bounded", () => {
    const attempt = responseSchema("get", path, "200");
    const request = property(attempt, "request");
    const body = property(request, "body");

    expect(operation("get", path).operationId).toBe("getAttempt");
    expect(operation("get", path).security).toEqual([{ bearerAuth: [] }]);
    expect(attempt.required).toEqual(expect.arrayContaining(["workflowId", "stepId", "n", "kind", "status", "scheduledAt"]));
    expect(attempt.required).not.toContain("request");
    expect(Object.keys(request.properties ?? {})).toEqual(expect.arrayContaining(["method", "url", "pool", "headers", "body"]));
    expect(Object.keys(property(attempt, "response").properties ?? {})).toEqual(expect.arrayContaining(["status", "headers", "body"]));
    expect(Object.keys(property(attempt, "verify").properties ?? {})).toEqual(["request", "response"]);
    expect(body.required).toEqual(["text", "bytes"]);
    expect(Object.keys(body.properties ?? {})).toContain("truncated");
    expect(Object.keys(operation("get", path).responses)).toEqual(expect.arrayContaining(["200", "400", "401", "404"]));
  });

  it("takes an attempt number in the path, digits only", () => {
    const n = (operation("get", path).parameters ?? []).find((parameter) => parameter.name === "n");
    expect(n).toMatchObject({ in: "path", required: true, schema: { type: "string", pattern: "^[1-9][0-9]{0,8}$" } });
  });

  it("leaves the exchange out of the workflow's steps", () => {
    const step = resolve(property(responseSchema("get", "/v1/workflows/{id}", "200"), "steps").items);
    const attempt = resolve(property(step, "attempts").items);
    expect(Object.keys(attempt.properties ?? {})).not.toEqual(expect.arrayContaining(["request"]));
    expect(Object.keys(attempt.properties ?? {})).not.toContain("response");
  });
});

describe("the targets in the OpenAPI document", () => {
  it("describes each breaker with its host, state, failures, open period and parked steps", () => {
    const target = resolve(property(responseSchema("get", "/v1/targets", "200"), "targets").items);

    expect(target.required).toEqual(expect.arrayContaining(["host", "state", "failures", "parked"]));
    expect(target.required).not.toContain("openUntil");
    expect(property(target, "state").enum).toEqual(["closed", "open", "half_open"]);
  });
});
