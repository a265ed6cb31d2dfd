// Generated malformed, mistyped and oversized requests against every route that takes a body or a query
// string, as the OpenAPI document lists them. Most mutations come from the document's own schemas (one
// field made invalid at a time), so the document and the validation cannot drift apart unnoticed. Every
// answer must be a 4xx in the contract's error shape, and nothing may change: no workflow is started, no
// existing workflow moves. Each property logs how many cases it ran.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { api, bearer, snapshot, startAs, uniqueId, type TestTenant } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { EXPECTED_ROUTES, expectErrorShape, fillPath, loadOpenApi, rawRequest, routesOf, type Parameter, type RawResponse, type Route, type Schema } from "../helpers/routes";

const doc = await loadOpenApi();
const v1Routes = routesOf(doc).filter((route) => route.path.startsWith("/v1/"));
const bodyRoutes = v1Routes.filter((route) => route.body !== undefined);
const getRoutes = v1Routes.filter((route) => route.method === "GET");
const START = "POST /v1/workflows";
const BATCH = "POST /v1/workflows/batch";
const PUBLISH = "PUT /v1/definitions/{name}";
const SCHEDULE = "POST /v1/schedules";
const WEBHOOK = "PUT /v1/webhooks/{id}";
const BULK = "POST /v1/bulk";

/**
 * Runs per property (schema mutations: per mutation site). About 1,500 cases, some 20 s on two cores: the
 * oversized bodies cost a megabyte each, so they get few runs; every schema mutation site gets a few.
 */
const RUNS = { notJson: 40, schemaPerSite: 8, startSchemaPerSite: 2, graph: 150, payloadLimits: 25, oversized: 10, contentType: 25, queryInvalid: 120, queryRandom: 80, pathParams: 150 };

const MiB = 1024 * 1024;
const PAYLOAD_LIMIT = 128 * 1024;

/** Long enough that nothing times out during the file: a fixture only changes when a request changes it. */
const STILL = {
  retry: { maxAttempts: 1 },
  timeouts: { scheduleToStartMs: 600_000, startToCloseMs: 600_000, heartbeatMs: 600_000 },
};

/** A definition that uses every part of the schema, so mutations reach every field. */
const BASE_DEFINITION = {
  name: "fuzz-flow",
  onFailure: "compensate",
  timeoutMs: 600_000,
  defaults: { retry: { maxAttempts: 1, initialIntervalMs: 10, backoffCoefficient: 2, maxIntervalMs: 100, jitter: 0 }, timeouts: STILL.timeouts, breaker: { failures: 5, openMs: 30_000 } },
  steps: [
    {
      id: "a",
      action: { type: "http", url: `${REMOTE}/a`, method: "POST", headers: { "X-Key": "k" }, body: { amount: "{{ input.amount }}" } },
      retry: { maxAttempts: 1 },
      timeouts: { heartbeatMs: 600_000 },
      breaker: { failures: 10, openMs: 60_000 },
      compensate: { type: "http", url: `${REMOTE}/a/undo`, body: { charge: "{{ steps.a.output.id }}" } },
    },
    { id: "b", dependsOn: ["a"], action: { type: "http", url: `${REMOTE}/b`, body: { ref: "{{ steps.a.output.id }}" } } },
    // The other step kinds and `when`, so that their fields are mutated too.
    { id: "c", dependsOn: ["b"], when: "{{ steps.b.output.ok }}", sleep: { durationMs: 600_000 } },
    { id: "d", dependsOn: ["c"], waitForEvent: { event: "approved", timeoutMs: 600_000, onTimeout: "skip" }, compensate: { type: "http", url: `${REMOTE}/d/undo` } },
  ],
};

let remote: ReturnType<typeof mockRemote>;
beforeAll(() => {
  remote = mockRemote((call) => (new URL(call.url).pathname === "/fail-now" ? json({ error: "declined" }, 422) : json({ accepted: true }, 202)));
});
afterAll(() => vi.restoreAllMocks());

// ---------------------------------------------------------------------------------------------------------
// Fixtures: the workflows the requests aim at, and what their owner sees of them.

const as = (tenant: TestTenant) => ({ headers: bearer(tenant) });

async function settle(id: string, status: string, stepStatus: string) {
  await vi.waitFor(
    async () => {
      const { workflow } = await snapshot("default", id);
      expect([workflow.status, workflow.steps[0].status]).toEqual([status, stepStatus]);
    },
    { timeout: 10_000, interval: 20 },
  );
}

/** A workflow in needs_attention with a failed step "charge": a skip would act on it. */
async function needsAttention() {
  const id = await startAs("default", { name: "fuzz-escalates", onFailure: "escalate", defaults: STILL, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/fail-now` } }] }, uniqueId("fuzz-default"));
  await settle(id, "needs_attention", "failed");
  return id;
}

/** A workflow that ended failed (onFailure "fail") with a failed step "charge": a redrive would start it again. */
async function failed() {
  const id = await startAs("default", { name: "fuzz-fails", onFailure: "fail", defaults: STILL, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/fail-now` } }] }, uniqueId("fuzz-default"));
  await vi.waitFor(
    async () => expect((await snapshot("default", id)).status).toBe("failed"),
    { timeout: 10_000, interval: 20 },
  );
  return id;
}

/** A paused workflow (its step waits for its remote): what resume acts on. */
async function paused() {
  const { id } = await waiting();
  const response = await api("POST", `/v1/workflows/${id}/pause`, {}, as("default"));
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return id;
}

/** A workflow whose step waits for its remote to report, and the task token the remote received. */
async function waiting() {
  const id = await startAs("default", { name: "fuzz-waits", onFailure: "escalate", defaults: STILL, steps: [{ id: "render", action: { type: "http", url: `${REMOTE}/wait` } }] }, uniqueId("fuzz-default"));
  await settle(id, "running", "waiting");
  const token = remote.calls.find((call) => call.headers["shepherd-workflow-id"] === id)?.headers["shepherd-task-token"];
  if (!token) throw new Error(`no task token reached the remote for ${id}`);
  return { id, token };
}

type Path = (string | number)[];

/** What a fuzzed request is aimed at, and how to tell that it changed nothing. */
interface Subject {
  route: Route;
  tenant: TestTenant;
  path: string;
  /** A body the route accepts; start bodies carry the given id. */
  base: (id: string) => Record<string, unknown>;
  before: () => Promise<unknown>;
  /** `sentId` is the workflow id a start body named, when it was a well-formed id. */
  expectUnchanged: (before: unknown, sentId?: string) => Promise<void>;
}

const VALID_BODIES: Record<string, (id: string) => Record<string, unknown>> = {
  // With a notify (its secret too), so that its fields are mutated.
  [START]: (id) => ({ id, definition: structuredClone(BASE_DEFINITION), input: { amount: 42 }, notify: { url: "https://hooks.example/fuzz-notify", secret: `whsec_${btoa("fuzz key of twenty-four b")}` } }),
  // One start and one scheduled start: the batch's own fields are mutated here, each item's through START.
  [BATCH]: (id) => ({
    workflows: [
      { id, definition: structuredClone(BASE_DEFINITION), input: { amount: 42 } },
      { id: `${id}-later`, definition: structuredClone(BASE_DEFINITION), startDelayMs: 600_000 },
    ],
  }),
  // Published under its own name (the path's): the same base, so mutations reach every field of a definition.
  [PUBLISH]: () => structuredClone(BASE_DEFINITION),
  // Every optional field set, so that each is mutated; the workflow is the start's, so mutations reach it too. Its
  // hosts are ones tenant gamma, which creates the fuzzed schedules, may call (vitest.config.ts).
  [SCHEDULE]: (id) => ({
    id,
    cron: "0 3 * * *",
    timezone: "Europe/Berlin",
    workflow: { definition: JSON.parse(JSON.stringify(BASE_DEFINITION).replaceAll(REMOTE, "https://api.allowed.example")), input: { amount: 42 } },
    overlap: "buffer_one",
    catchupWindowMs: 60_000,
    paused: true,
  }),
  // Every operator command takes a reason; each body sets it, so it is mutated too.
  "POST /v1/workflows/{id}/cancel": () => ({ reason: "fuzz" }),
  "POST /v1/workflows/{id}/compensate": () => ({ reason: "fuzz" }),
  "POST /v1/workflows/{id}/steps/{stepId}/retry": () => ({ reason: "fuzz" }),
  "POST /v1/workflows/{id}/pause": () => ({ reason: "fuzz" }),
  "POST /v1/workflows/{id}/resume": () => ({ reason: "fuzz" }),
  "POST /v1/workflows/{id}/steps/{stepId}/skip": () => ({ output: { skipped: true }, reason: "fuzz" }),
  "POST /v1/workflows/{id}/events": () => ({ event: "approved", payload: { by: "fuzz" }, id: "fuzz-event", reason: "fuzz" }),
  // Every field set, so each is mutated; no wait, so an accepted poll answers at once.
  "POST /v1/pools/{pool}/tasks/poll": () => ({ workerId: "fuzz-worker", waitMs: 0, max: 2 }),
  "POST /v1/workflows/{id}/terminate": () => ({ reason: "fuzz" }),
  "POST /v1/workflows/{id}/redrive": () => ({ fromStep: "charge", reason: "fuzz" }),
  "POST /v1/tasks/{token}/heartbeat": () => ({ progress: { percent: 10 } }),
  "POST /v1/tasks/{token}/complete": () => ({ output: { ok: true } }),
  "POST /v1/tasks/{token}/fail": () => ({ error: { message: "boom", retryable: false } }),
  // Every field set, so each is mutated; it matches no workflow of its tenant (an accepted job would act on none). A new
  // id each time, so each accepted body is a new job.
  [BULK]: () => ({
    id: `fuzz-bulk-${crypto.randomUUID()}`,
    action: "event",
    filter: { status: "running", name: "fuzz-bulk", createdBefore: 2_000_000_000_000, createdAfter: 1, parentId: "fuzz-parent", ids: ["fuzz-bulk-a", "fuzz-bulk-b"] },
    reason: "fuzz",
    event: { event: "approved", payload: { by: "fuzz" }, id: "fuzz-bulk-event", reason: "fuzz" },
  }),
  // The secret set too, so that it is mutated.
  [WEBHOOK]: () => ({ url: "https://hooks.example/fuzz", events: ["workflow.*", "step.timed_out"], secret: `whsec_${btoa("fuzz key of twenty-four b")}` }),
};

async function listIds(tenant: TestTenant): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await api("GET", `/v1/workflows?limit=100${cursor ? `&cursor=${cursor}` : ""}`, undefined, as(tenant));
    expect(page.status).toBe(200);
    ids.push(...page.body.workflows.map((w: { id: string }) => w.id));
    cursor = page.body.nextCursor;
  } while (cursor);
  return ids;
}

/** Every name the tenant published, with its latest version and hash: a stored version changes it. */
async function listDefinitions(tenant: TestTenant): Promise<unknown[]> {
  const all: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = await api("GET", `/v1/definitions?limit=100${cursor ? `&cursor=${cursor}` : ""}`, undefined, as(tenant));
    expect(page.status).toBe(200);
    all.push(...page.body.definitions);
    cursor = page.body.nextCursor;
  } while (cursor);
  return all;
}

/** Every bulk job of the tenant (at most a page of them: the fuzzing makes few): a job created changes the list. */
async function listBulkJobs(tenant: TestTenant): Promise<unknown[]> {
  const response = await api("GET", "/v1/bulk?limit=100", undefined, as(tenant));
  expect(response.status).toBe(200);
  return response.body.jobs.map((job: { id: string }) => job.id);
}

/** Every schedule of the tenant, as it reads them: a created or changed schedule changes the list. */
/** Every webhook of the tenant: a stored or replaced webhook changes the list. */
async function listWebhooks(tenant: TestTenant): Promise<unknown[]> {
  const response = await api("GET", "/v1/webhooks", undefined, as(tenant));
  expect(response.status).toBe(200);
  return response.body.webhooks;
}

async function listSchedules(tenant: TestTenant): Promise<unknown[]> {
  const all: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = await api("GET", `/v1/schedules?limit=100${cursor ? `&cursor=${cursor}` : ""}`, undefined, as(tenant));
    expect(page.status).toBe(200);
    all.push(...page.body.schedules);
    cursor = page.body.nextCursor;
  } while (cursor);
  return all;
}

/** A definition of tenant "default", published once: what the definitions routes' path parameters aim at. */
async function published(): Promise<string> {
  const name = "fuzz-published";
  const response = await api("PUT", `/v1/definitions/${name}`, { ...structuredClone(BASE_DEFINITION), name }, as("default"));
  expect([200, 201], JSON.stringify(response.body)).toContain(response.status);
  return name;
}

interface Fixtures {
  /** A published definition's name (version 1). */
  definition: string;
  attention: string;
  /** What redrive acts on: a workflow in needs_attention cannot be redriven, so its control would be a 409. */
  failed: string;
  /** What resume acts on; pause acts on the running `waiting`. */
  paused: string;
  waiting: { id: string; token: string };
}

/** The workflow a route's fuzzed requests aim at. */
function targetOf(route: Route, fixtures: Fixtures): string {
  if (route.path.startsWith("/v1/tasks/") || route.name === "POST /v1/workflows/{id}/pause") return fixtures.waiting.id;
  if (route.name === "POST /v1/workflows/{id}/resume") return fixtures.paused;
  return route.name === "POST /v1/workflows/{id}/redrive" ? fixtures.failed : fixtures.attention;
}

function subjectFor(route: Route, fixtures: Fixtures, startTenant: TestTenant = "alpha"): Subject {
  const base = VALID_BODIES[route.name];
  if (!base) throw new Error(`no valid body known for ${route.name}: add one to VALID_BODIES`);
  if (route.name === START || route.name === BATCH) {
    // Start is fuzzed as its own tenant, so its list is the record of every workflow it ever started (the batch's too).
    return {
      route,
      tenant: startTenant,
      path: route.path,
      base,
      before: () => listIds(startTenant),
      expectUnchanged: async (before, sentId) => {
        if (sentId !== undefined) {
          const response = await api("GET", `/v1/workflows/${sentId}`, undefined, as(startTenant));
          expect(response.status, `a workflow "${sentId}" exists`).toBe(404);
        }
        expect(await listIds(startTenant)).toEqual(before);
      },
    };
  }
  if (route.name === PUBLISH) {
    // Publish is fuzzed as a tenant of its own too (so its writes and the start's do not share a rate-limit
    // window), whose list of definitions is the record of every version it stored.
    const tenant = startTenant === "alpha" ? "lister" : startTenant;
    return {
      route,
      tenant,
      path: fillPath(route.path, { name: BASE_DEFINITION.name }),
      base,
      before: () => listDefinitions(tenant),
      expectUnchanged: async (before) => expect(await listDefinitions(tenant)).toEqual(before),
    };
  }
  if (route.name === SCHEDULE) {
    // A tenant of its own as well, whose list of schedules is the record of every schedule it created.
    const tenant = startTenant === "alpha" ? "gamma" : startTenant;
    return {
      route,
      tenant,
      path: route.path,
      base,
      before: () => listSchedules(tenant),
      expectUnchanged: async (before, sentId) => {
        // A schedule id has at most 100 characters (room for ":<fire time>"); a longer one could name none.
        if (sentId !== undefined && sentId.length <= 100) {
          const response = await api("GET", `/v1/schedules/${sentId}`, undefined, as(tenant));
          expect(response.status, `a schedule "${sentId}" exists`).toBe(404);
        }
        expect(await listSchedules(tenant)).toEqual(before);
      },
    };
  }
  if (route.name === BULK) {
    // A tenant of its own for the refusals (the controls' jobs go to beta), whose list of jobs records every job made.
    const tenant = startTenant === "alpha" ? "lister" : startTenant;
    return {
      route,
      tenant,
      path: route.path,
      base,
      before: () => listBulkJobs(tenant),
      expectUnchanged: async (before) => expect(await listBulkJobs(tenant)).toEqual(before),
    };
  }
  if (route.name === WEBHOOK) {
    // One id of its own, and the tenant's list of webhooks as the record of what it stored.
    const tenant = startTenant === "alpha" ? "default" : startTenant;
    return {
      route,
      tenant,
      path: fillPath(route.path, { id: "fuzz-hook" }),
      base,
      before: () => listWebhooks(tenant),
      expectUnchanged: async (before) => expect(await listWebhooks(tenant)).toEqual(before),
    };
  }
  const target = targetOf(route, fixtures);
  return {
    route,
    tenant: "default",
    path: fillPath(route.path, { id: target, stepId: "charge", token: fixtures.waiting.token, name: fixtures.definition, version: "1", pool: "fuzz-pool", n: "1" }),
    base,
    before: () => snapshot("default", target),
    expectUnchanged: async (before) => expect(await snapshot("default", target)).toEqual(before),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Sending, checking and counting.

interface Sent {
  body?: BodyInit;
  /** undefined: application/json; null: no Content-Type at all. */
  contentType?: string | null;
}

function send(subject: Pick<Subject, "tenant" | "path" | "route">, sent: Sent, path = subject.path): Promise<RawResponse> {
  const headers = new Headers(bearer(subject.tenant));
  if (sent.contentType !== null) headers.set("Content-Type", sent.contentType ?? "application/json");
  return rawRequest(subject.route.method, path, { headers, ...(sent.body === undefined ? {} : { body: sent.body }) });
}

/** The issue a 400 must name: at `path`, among the zod issues of `details`. */
function expectIssueAt(response: RawResponse, path: Path, context: string) {
  const paths = (response.body.error.details ?? []).map((issue: { path: Path }) => JSON.stringify(issue.path));
  expect(paths, `${context}: no issue at ${JSON.stringify(path)} in ${response.text.slice(0, 300)}`).toContain(JSON.stringify(path));
}

const counts = new Map<string, number>();

/** fc.assert over an async property, counting the cases that ran (shrinking included) and logging the count. */
async function property<T>(name: string, arbitrary: fc.Arbitrary<T>, numRuns: number, run: (value: T) => Promise<void>) {
  await propertyPerSite(name, [arbitrary], numRuns, run);
}

/** One fc.assert per arbitrary, `numRuns` each, so every one of them is tried; one count for them all. */
async function propertyPerSite<T>(name: string, arbitraries: fc.Arbitrary<T>[], numRuns: number, run: (value: T) => Promise<void>) {
  let cases = 0;
  try {
    for (const arbitrary of arbitraries) {
      await fc.assert(
        fc.asyncProperty(arbitrary, async (value) => {
          cases += 1;
          await run(value);
        }),
        { numRuns },
      );
    }
  } finally {
    counts.set(name, cases);
    console.log(`fuzz: ${name} — ${cases} cases`);
  }
}

afterAll(() => {
  const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
  console.log(`fuzz: total — ${total} cases in ${counts.size} properties`);
});

// ---------------------------------------------------------------------------------------------------------
// Generators of invalid values, from the document's JSON Schemas.

const smallJson = fc.jsonValue({ maxDepth: 2 });

function isOfType(value: unknown, type: string): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      throw new Error(`unknown JSON Schema type ${type}`);
  }
}

const typesOf = (schema: Schema): string[] => (schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type]);

/** Strings the pattern refuses: the usual suspects, one bad character in a good id, too long, anything. */
function breaking(pattern: string): fc.Arbitrary<string> {
  const re = new RegExp(pattern, "u");
  const goodChar = fc.constantFrom(..."abcXYZ019_.:-");
  return fc
    .oneof(
      fc.constantFrom("", "-a", "_a", ".a", ":a", "a b", "a/b", "a?b", "a#b", "a%2Fb", "é", "a\u0000", "a\n", " a", "a ", "ａ", "../a", "a\u200b"),
      fc.tuple(fc.string({ unit: goodChar, maxLength: 20 }), fc.constantFrom(" ", "/", "\\", "?", "#", "%", "é", "\t", "+", "*", "'", '"', "<"), fc.string({ unit: goodChar, maxLength: 20 })).map(([a, bad, b]) => `a${a}${bad}${b}`),
      fc.integer({ min: 129, max: 300 }).map((length) => "a".repeat(length)),
      fc.string({ maxLength: 40, unit: "grapheme" }),
    )
    .filter((s) => !re.test(s));
}

/** A value the schema refuses: of another JSON type, or of its type and outside its constraints. */
function invalidValue(schema: Schema): fc.Arbitrary<unknown> | undefined {
  const types = typesOf(schema);
  if (types.length === 0 && !schema.enum) return undefined;
  const options: fc.Arbitrary<unknown>[] = [];
  if (types.length > 0) options.push(smallJson.filter((value) => !types.some((type) => isOfType(value, type))));
  if (schema.enum) {
    const allowed = schema.enum;
    options.push(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...allowed.map((v) => String(v).toUpperCase()), ...allowed.map((v) => ` ${String(v)}`))).filter((v) => !allowed.includes(v)));
  }
  if (types.includes("string")) {
    if (schema.pattern) options.push(breaking(schema.pattern));
    if (schema.minLength !== undefined && schema.minLength > 0) options.push(fc.constant("a".repeat(schema.minLength - 1)));
    if (schema.maxLength !== undefined) options.push(fc.integer({ min: schema.maxLength + 1, max: schema.maxLength + 64 }).map((n) => "a".repeat(n)));
  }
  if (types.includes("integer") || types.includes("number")) {
    const { minimum, maximum } = schema;
    if (types.includes("integer") && !types.includes("number")) {
      const low = minimum ?? 0;
      options.push(fc.integer({ min: 0, max: 1000 }).map((n) => low + n + 0.5));
    }
    // Filtered, not only bounded: -0 is "below" 0 to fast-check, but JSON writes it as 0.
    if (minimum !== undefined) options.push(fc.oneof(fc.constant(minimum - 1), fc.double({ min: -1e12, max: minimum, noNaN: true }).filter((v) => v < minimum)));
    if (maximum !== undefined) options.push(fc.oneof(fc.constant(maximum + 1), fc.double({ min: maximum, max: 1e15, noNaN: true }).filter((v) => v > maximum)));
  }
  return options.length > 0 ? fc.oneof(...options) : undefined;
}

/** One field made invalid: what to change and the path whose issue the 400 must report. */
type Mutation =
  | { kind: "set"; path: Path; value: unknown; reported: Path; what: string }
  | { kind: "delete"; path: Path; reported: Path; what: string };

function unknownKey(known: string[]): fc.Arbitrary<string> {
  const variants = known.flatMap((key) => [key.toUpperCase(), `${key} `, `${key}_`]);
  return fc.oneof(fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", ...variants), fc.string({ minLength: 1, maxLength: 12 })).filter((key) => !known.includes(key));
}

/** Copies of an array's items, ids made unique so that only the length is wrong. */
function copies(items: unknown[], count: number): unknown[] {
  return Array.from({ length: count }, (_, i) => {
    const item = structuredClone(items[i % items.length]);
    if (item && typeof item === "object" && "id" in item && typeof item.id === "string") return { ...item, id: `${item.id}${i}`, dependsOn: [] };
    return item;
  });
}

/** The member of a union (`oneOf`) that a value is: the one whose `type` it has, else the first. */
function memberOf(union: Schema, value: unknown): Schema {
  if (!union.oneOf) return union;
  const type = isOfType(value, "object") ? (value as Record<string, unknown>).type : undefined;
  return union.oneOf.find((member) => member.properties?.type?.enum?.includes(type)) ?? union.oneOf[0] ?? union;
}

/** Every single-field mutation of `value` that `schema` refuses, walking the value and the schema together. */
function mutations(union: Schema, value: unknown, path: Path, out: fc.Arbitrary<Mutation>[] = []): fc.Arbitrary<Mutation>[] {
  const schema = memberOf(union, value);
  const invalid = invalidValue(schema);
  if (invalid) out.push(invalid.map((v) => ({ kind: "set", path, value: v, reported: path, what: "invalid value" })));
  if (isOfType(value, "object")) {
    const object = value as Record<string, unknown>;
    const properties = schema.properties ?? {};
    // Whatever the document says of additionalProperties: the API refuses fields it does not know.
    if (schema.properties) {
      out.push(fc.tuple(unknownKey(Object.keys(properties)), smallJson).map(([key, v]) => ({ kind: "set", path: [...path, key], value: v, reported: path, what: "unknown field" })));
    }
    for (const key of schema.required ?? []) out.push(fc.constant({ kind: "delete", path: [...path, key], reported: [...path, key], what: "missing required field" }));
    for (const [key, sub] of Object.entries(properties)) {
      if (key in object) mutations(sub, object[key], [...path, key], out);
      else {
        const absent = invalidValue(sub);
        if (absent) out.push(absent.map((v) => ({ kind: "set", path: [...path, key], value: v, reported: [...path, key], what: "invalid optional field" })));
      }
    }
    if (typeof schema.additionalProperties === "object" && schema.additionalProperties !== null) {
      const values = schema.additionalProperties as Schema;
      for (const [key, v] of Object.entries(object)) mutations(values, v, [...path, key], out);
    }
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, index) => mutations(schema.items as Schema, item, [...path, index], out));
    if (schema.maxItems !== undefined && value.length > 0) {
      const max = schema.maxItems;
      out.push(fc.integer({ min: max + 1, max: max + 10 }).map((n) => ({ kind: "set", path, value: copies(value, n), reported: path, what: `${n} items` })));
    }
    if (schema.minItems !== undefined && schema.minItems > 0) out.push(fc.constant({ kind: "set", path, value: [], reported: path, what: "no items" }));
  }
  return out;
}

/** The paths of free-form JSON (`{}` in the schema): input, outputs, progress, action bodies. */
function payloadPaths(union: Schema, value: unknown, path: Path, out: Path[] = []): Path[] {
  const schema = memberOf(union, value);
  if (Object.keys(schema).filter((key) => key !== "description").length === 0) out.push(path);
  if (isOfType(value, "object")) {
    for (const [key, sub] of Object.entries(schema.properties ?? {})) payloadPaths(sub, (value as Record<string, unknown>)[key], [...path, key], out);
  }
  if (Array.isArray(value) && schema.items) value.forEach((item, index) => payloadPaths(schema.items as Schema, item, [...path, index], out));
  return out;
}

function setAt(root: unknown, path: Path, value: unknown, remove = false): unknown {
  if (path.length === 0) return value;
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (remove) delete node[last];
  // defineProperty, so that "__proto__" becomes a field as it would in parsed JSON.
  else Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
  return root;
}

function apply(base: Record<string, unknown>, mutation: Mutation): unknown {
  return setAt(structuredClone(base), mutation.path, mutation.kind === "set" ? mutation.value : undefined, mutation.kind === "delete");
}

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
/** A path segment as the router reads it. */
const decodedSegment = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};
/** The webhook id segment of a path as the URL parser sends it ("" when the path no longer names one). */
const sentWebhookId = (path: string): string => {
  const sent = new URL(path, "http://shepherd.test").pathname;
  return sent.startsWith("/v1/webhooks/") ? sent.slice("/v1/webhooks/".length) : "";
};
/** The pool segment of a poll's path as the URL parser sends it ("" when the path no longer names one). */
const sentPoolName = (path: string): string => {
  const sent = new URL(path, "http://shepherd.test").pathname.match(/^\/v1\/pools\/([^/]*)\/tasks\/poll$/);
  return sent?.[1] ?? "";
};
const sentIdOf = (body: unknown): string | undefined => {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === "string" && ID_RE.test(id) ? id : undefined;
};

/** The body as text: JSON, with a marker string replaced by raw text (nesting too deep to stringify). */
function bodyText(body: unknown, raw?: { marker: string; text: string }): string {
  const text = JSON.stringify(body);
  return raw ? text.replace(JSON.stringify(raw.marker), raw.text) : text;
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text.replace(/^\uFEFF/, ""));
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------------

describe("case 23 (input fuzz): the routes the fuzzing covers", () => {
  it("are every route of the document that takes a body, and every GET route", () => {
    expect(bodyRoutes.map((route) => route.name).sort()).toEqual(Object.keys(VALID_BODIES).sort());
    expect(getRoutes.map((route) => route.name).sort()).toEqual(EXPECTED_ROUTES.filter((name) => name.startsWith("GET ")).sort());
  });
});

let fixtures: Fixtures;
beforeAll(async () => {
  fixtures = { definition: await published(), attention: await needsAttention(), failed: await failed(), paused: await paused(), waiting: await waiting() };
}, 30_000);

describe.each(bodyRoutes)("$name with a body it must refuse", (route) => {
  let subject: Subject;
  beforeAll(() => {
    subject = subjectFor(route, fixtures);
  });

  /** Sends, checks the refusal, then checks that nothing changed. */
  async function refused(sent: Sent, status: number | number[], code: string | RegExp | undefined, context: string, sentId?: string) {
    const before = await subject.before();
    const response = await send(subject, sent);
    expectErrorShape(response, status, code, context);
    await subject.expectUnchanged(before, sentId);
    return response;
  }

  it("accepts its unmutated base body (the control for every refusal below)", async () => {
    const fresh = subjectFor(route, { definition: fixtures.definition, attention: await needsAttention(), failed: await failed(), paused: await paused(), waiting: await waiting() }, "beta");
    const response = await send(fresh, { body: JSON.stringify(fresh.base(uniqueId("fuzz-control"))) });
    expect(response.status, response.text.slice(0, 300)).toBeGreaterThanOrEqual(200);
    expect(response.status, response.text.slice(0, 300)).toBeLessThan(300);
  });

  it("answers bodies that are not JSON with 400 invalid_json", { timeout: 60_000 }, async () => {
    const id = uniqueId("fuzz");
    const valid = JSON.stringify(subject.base(id));
    const text = fc.oneof(
      fc.string({ unit: "binary", maxLength: 200 }),
      fc.string({ unit: "grapheme-composite", maxLength: 50 }),
      fc.integer({ min: 0, max: valid.length - 1 }).map((cut) => valid.slice(0, cut)),
      fc.string({ minLength: 1, maxLength: 10 }).map((tail) => `${valid}${tail}`),
      fc.constantFrom("NaN", "undefined", "{'a': 1}", '{"a": 1,}', "[1,]", "{a: 1}", "// c\n{}", "\u0000", "0x10", "{}{}", '"unterminated'),
    );
    const bytes = fc.uint8Array({ minLength: 1, maxLength: 200 }).map((array) => ({ bytes: array }));
    const notJson = fc.oneof(text, bytes).filter((body) => !parsesAsJson(typeof body === "string" ? body : new TextDecoder().decode(body.bytes)));
    await property(`${route.name} bodies that are not JSON`, notJson, RUNS.notJson, async (body) => {
      await refused({ body: typeof body === "string" ? body : body.bytes }, 400, "invalid_json", "not JSON", id);
    });
  });

  it("answers JSON with one field made invalid, per the document's schema, with 400 naming that field", { timeout: 60_000 }, async () => {
    // Site by site rather than one oneof over all of them: a uniform pick among ~100 sites would leave
    // some (the body's own unknown field, say) untried in a run.
    const sites = mutations(route.body as Schema, subject.base("placeholder"), []);
    // A definition has as many sites as a start body: publish and a schedule (which holds one) get as few runs per site.
    const perSite = route.name === START || route.name === PUBLISH || route.name === SCHEDULE ? RUNS.startSchemaPerSite : RUNS.schemaPerSite;
    await propertyPerSite(`${route.name} schema mutations (${sites.length} sites)`, sites, perSite, async (mutation) => {
      const body = apply(subject.base(uniqueId("fuzz")), mutation);
      const context = `${mutation.what} at ${JSON.stringify(mutation.path)}`;
      const response = await refused({ body: JSON.stringify(body) }, 400, "validation_failed", context, sentIdOf(body));
      expectIssueAt(response, mutation.reported, context);
    });
  });

  it("answers free-form JSON over 128 KiB or nested too deep with 400 naming where", { timeout: 60_000 }, async () => {
    const slots = payloadPaths(route.body as Schema, subject.base("placeholder"), []);
    if (slots.length === 0) {
      // These bodies have no free-form field (their strings are bounded, mutated above); a batch's items are each
      // checked as a start body, answered one by one in its 200 (test/api/start-batch.test.ts), and fuzzed through START.
      const reasonOnly = ["cancel", "compensate", "steps/{stepId}/retry", "pause", "resume", "terminate", "redrive"].map((path) => `POST /v1/workflows/{id}/${path}`);
      expect(["POST /v1/tasks/{token}/fail", ...reasonOnly, "POST /v1/pools/{pool}/tasks/poll", WEBHOOK, BATCH]).toContain(route.name);
      return;
    }
    const arbitrary = fc.record({
      slot: fc.constantFrom(...slots),
      kind: fc.constantFrom("big string", "big array", "deep arrays", "deep objects"),
      extraBytes: fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 200_000 })),
      depth: fc.oneof(fc.integer({ min: 65, max: 70 }), fc.integer({ min: 71, max: 20_000 }), fc.constant(100_000)),
    });
    await property(`${route.name} payloads over the limits`, arbitrary, RUNS.payloadLimits, async ({ slot, kind, extraBytes, depth }) => {
      const marker = "__FUZZ_PAYLOAD__";
      const base = setAt(subject.base(uniqueId("fuzz")), slot, marker);
      // A JSON string of n characters is n + 2 bytes; an array of zeros is 2n + 1.
      const size = PAYLOAD_LIMIT + extraBytes;
      const raw =
        kind === "big string"
          ? JSON.stringify("x".repeat(size))
          : kind === "big array"
            ? `[${Array.from({ length: Math.ceil(size / 2) }, () => "0").join(",")}]`
            : kind === "deep arrays"
              ? `${"[".repeat(depth)}${"]".repeat(depth)}`
              : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
      const context = `${kind} at ${JSON.stringify(slot)} (${kind.startsWith("deep") ? `depth ${depth}` : `${size} bytes`})`;
      const response = await refused({ body: bodyText(base, { marker, text: raw }) }, 400, "validation_failed", context, sentIdOf(base));
      expectIssueAt(response, slot, context);
    });
  });

  it("answers a body over 1 MiB with 413 payload_too_large, with or without a Content-Length", { timeout: 60_000 }, async () => {
    const arbitrary = fc.record({
      extraBytes: fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 256 * 1024 })),
      shape: fc.constantFrom("padded field", "not JSON"),
      streamed: fc.boolean(),
    });
    await property(`${route.name} bodies over 1 MiB`, arbitrary, RUNS.oversized, async ({ extraBytes, shape, streamed }) => {
      const id = uniqueId("fuzz");
      const base = JSON.stringify({ ...subject.base(id), padding: "" });
      const text =
        shape === "padded field" ? base.replace('"padding":""', `"padding":"${"x".repeat(MiB + extraBytes - base.length)}"`) : "x".repeat(MiB + extraBytes);
      expect(new TextEncoder().encode(text).byteLength).toBe(MiB + extraBytes);
      const body = streamed ? new Blob([text]).stream() : text;
      await refused({ body }, 413, "payload_too_large", `${shape}, ${MiB + extraBytes} bytes${streamed ? ", streamed" : ""}`, id);
    });
  });

  it("answers a valid body sent as anything but application/json with 415", { timeout: 60_000 }, async () => {
    const token = fc.string({ unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789.+-"), minLength: 1, maxLength: 15 });
    const contentType = fc.oneof(
      fc.constantFrom<string | null>(
        null,
        "",
        "text/plain",
        "text/plain; charset=utf-8",
        "text/json",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        "application/octet-stream",
        "application/jsonx",
        "application/json-seq",
        "application/x-json",
        "application/vnd.api+json",
        "*/*",
        "application/*",
        "json",
        "application",
      ),
      fc.tuple(token, token).map(([type, subtype]) => `${type}/${subtype}`).filter((type) => !/json/i.test(type)),
    );
    await property(`${route.name} content types`, contentType, RUNS.contentType, async (type) => {
      const id = uniqueId("fuzz");
      await refused({ body: JSON.stringify(subject.base(id)), contentType: type }, 415, "unsupported_media_type", `Content-Type ${JSON.stringify(type)}`, id);
    });
  });
});

/** A start definition broken in a way a schema cannot say: the graph, the templates, the targets. */
const graphMutation: fc.Arbitrary<{ what: string; steps: unknown[] }> = (() => {
  const step = (id: string, extra: Record<string, unknown> = {}) => ({ id, action: { type: "http", url: `${REMOTE}/${id}` }, ...extra });
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);
  const cycle = fc.tuple(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 4 })).map(([length, extra]) => ({
    what: `a cycle of ${length}`,
    steps: [...ids(length).map((id, i, all) => step(id, { dependsOn: [all[(i + 1) % length]] })), ...ids(extra).map((id) => step(`x${id}`, { dependsOn: [] }))],
  }));
  const unknownDependency = fc.tuple(fc.integer({ min: 1, max: 5 }), fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/)).map(([n, ghost]) => ({
    what: `a dependency on unknown "g${ghost}"`,
    steps: [...ids(n).map((id) => step(id)), step("last", { dependsOn: [`g${ghost}`] })],
  }));
  const duplicate = fc.tuple(fc.integer({ min: 2, max: 6 }), fc.nat(), fc.nat()).map(([n, a, b]) => {
    const steps = ids(n).map((id) => step(id, { dependsOn: [] }));
    const from = a % n;
    const to = (from + 1 + (b % (n - 1))) % n;
    steps[to] = step(`s${from}`, { dependsOn: [] });
    return { what: `step ${to} repeating the id of step ${from}`, steps };
  });
  const template = fc
    .constantFrom("{{ steps.later.output }}", "{{ steps.sibling.output.id }}", "{{ steps.ghost.output }}", "{{ steps.first.attempt.x }}", "{{ nothing.here }}", "{{ steps..output }}")
    .map((ref) => ({
      what: `a template ${ref}`,
      steps: [step("first"), step("sibling", { dependsOn: [] }), { id: "reader", dependsOn: ["first"], action: { type: "http", url: `${REMOTE}/r`, body: { ref } } }, step("later")],
    }));
  const target = fc
    .constantFrom("https://user@x.example/", "https://user:pw@x.example/", "ftp://x.example/a", "file:///etc/passwd", "javascript:alert(1)", "data:text/plain,hi", "mailto:a@x.example", "/relative", "//x.example/a", "not a url", "https://", "ws://x.example/")
    .chain((url) => fc.constantFrom("action", "compensate").map((field) => ({ what: `${field} url ${url}`, steps: [step("a"), field === "action" ? { id: "b", action: { type: "http", url } } : step("b", { compensate: { type: "http", url } })] })));
  const tooMany = fc.integer({ min: 201, max: 230 }).map((n) => ({ what: `${n} steps`, steps: ids(n).map((id) => step(id)) }));
  return fc.oneof(cycle, unknownDependency, duplicate, template, target, tooMany);
})();

describe("POST /v1/workflows with a step body nested too deep", () => {
  // Found by the payload property above: a 500 (RangeError in the template scan) from a 40 KB request.
  it("answers 400 naming the body, not 500, for 20,000 nested arrays, and starts nothing", async () => {
    const id = uniqueId("fuzz-deep");
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const body = `{"id":"${id}","definition":{"name":"deep","steps":[{"id":"a","action":{"type":"http","url":"${REMOTE}/a","body":${deep}}}]}}`;

    const response = await send({ route: bodyRoutes.find((r) => r.name === START)!, tenant: "alpha", path: "/v1/workflows" }, { body });

    expectErrorShape(response, 400, "validation_failed");
    expectIssueAt(response, ["definition", "steps", 0, "action", "body"], "20,000 nested arrays");
    expect((await api("GET", `/v1/workflows/${id}`, undefined, as("alpha"))).status).toBe(404);
  });
});

describe("POST /v1/workflows with a definition that breaks its graph, templates or targets", () => {
  it("is refused with 400 naming a step, and starts nothing", { timeout: 60_000 }, async () => {
    const route = bodyRoutes.find((r) => r.name === START)!;
    const subject = subjectFor(route, fixtures);
    await property("POST /v1/workflows graph, template and target mutations", graphMutation, RUNS.graph, async ({ what, steps }) => {
      const id = uniqueId("fuzz");
      const before = await subject.before();
      const response = await send(subject, { body: JSON.stringify({ id, definition: { name: "fuzz-graph", defaults: STILL, steps } }) });
      expectErrorShape(response, 400, "validation_failed", what);
      const paths: Path[] = response.body.error.details.map((issue: { path: Path }) => issue.path);
      expect(paths.some((path) => path[0] === "definition" && path[1] === "steps"), `${what}: ${response.text.slice(0, 300)}`).toBe(true);
      await subject.expectUnchanged(before, id);
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
// Query strings and path parameters.

/** A query value no reading of the parameter's schema accepts. */
function invalidQueryValue(schema: Schema): fc.Arbitrary<string> {
  const types = typesOf(schema);
  const options: fc.Arbitrary<string>[] = [];
  if (types.includes("integer")) {
    const { minimum, maximum } = schema;
    options.push(fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,9}$/), fc.constantFrom("null", "true", "1.5", "1,2", "1 2", "--1", "1e400", "9".repeat(400)));
    options.push(fc.tuple(fc.nat(1000), fc.integer({ min: 1, max: 9 })).map(([n, d]) => `${n}.${d}`));
    if (minimum !== undefined) options.push(fc.integer({ min: 1, max: 1e9 }).map((n) => String(minimum - n)));
    if (maximum !== undefined) options.push(fc.integer({ min: 1, max: 1e9 }).map((n) => String(maximum + n)));
  }
  if (schema.enum) {
    const allowed = schema.enum.map(String);
    options.push(fc.oneof(fc.string({ maxLength: 15 }), fc.constantFrom(...allowed.map((v) => v.toUpperCase()))).filter((v) => !allowed.includes(v)));
  }
  if (schema.pattern) options.push(breaking(schema.pattern));
  if (schema.minLength !== undefined && schema.minLength > 0) options.push(fc.constant(""));
  if (schema.maxLength !== undefined) options.push(fc.integer({ min: schema.maxLength + 1, max: schema.maxLength + 200 }).map((n) => "a".repeat(n)));
  if (options.length === 0) throw new Error(`no invalid values known for ${JSON.stringify(schema)}`);
  return fc.oneof(...options);
}

/** A value the parameter accepts, to go along with the invalid one; undefined for what cannot be made up (cursors). */
function validQueryValue(parameter: Parameter): fc.Arbitrary<string> | undefined {
  const { schema } = parameter;
  if (schema.enum) return fc.constantFrom(...schema.enum.map(String));
  if (typesOf(schema).includes("integer")) return fc.integer({ min: schema.minimum ?? 0, max: schema.maximum ?? 1000 }).map(String);
  if (schema.pattern) return fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
  return undefined;
}

/**
 * The workflow a GET's query strings aim at: the one in needs_attention, but for the result's long poll the one that
 * ended, so an accepted query is answered at once (200) instead of after its wait.
 */
function queriedPath(route: Route): string {
  const id = route.name === "GET /v1/workflows/{id}/result" ? fixtures.failed : fixtures.attention;
  return fillPath(route.path, { id, stepId: "charge", name: fixtures.definition, version: "1", pool: "fuzz-pool", n: "1" });
}

describe.each(getRoutes.filter((route) => route.queryParams.length > 0))("$name with query parameters it must refuse", (route) => {
  it("answers one invalid parameter, among valid ones, with 400 naming it", { timeout: 60_000 }, async () => {
    const path = queriedPath(route);
    const before = await snapshot("default", fixtures.attention);
    const arbitrary = fc
      .constantFrom(...route.queryParams)
      .chain((bad) =>
        fc.tuple(
          fc.constant(bad.name),
          invalidQueryValue(bad.schema),
          fc.tuple(...route.queryParams.filter((p) => p !== bad).map((p) => fc.option(validQueryValue(p) ?? fc.constant(undefined), { nil: undefined }).map((v) => [p.name, v] as const))),
        ),
      );
    await property(`${route.name} invalid query parameters`, arbitrary, RUNS.queryInvalid, async ([name, value, others]) => {
      const params = new URLSearchParams();
      for (const [other, v] of others) if (v !== undefined) params.set(other, v);
      params.set(name, value);
      const response = await send({ route, tenant: "default", path }, { contentType: null }, `${path}?${params}`);
      const context = `${name}=${JSON.stringify(value.slice(0, 80))}`;
      expectErrorShape(response, 400, "validation_failed", context);
      expectIssueAt(response, [name], context);
    });
    expect(await snapshot("default", fixtures.attention)).toEqual(before);
  });
});

/** Raw query-string text: keys and values with broken escapes, repeats, odd separators and unicode. */
const rawQuery: fc.Arbitrary<string> = (() => {
  const piece = fc.oneof(
    fc.constantFrom("status", "name", "limit", "cursor", "after", "limit", "waitMs", "", "%", "%zz", "%E0%A4%A", "%00", "%FF", "+", "=", "&", "[]", "a[b]", "__proto__", "constructor"),
    fc.string({ maxLength: 12 }).map(encodeURIComponent),
    fc.string({ maxLength: 12, unit: "grapheme" }),
  );
  const pair = fc.tuple(piece, fc.constantFrom("=", "", "=="), piece).map(([key, eq, value]) => `${key}${eq}${value}`);
  return fc.array(pair, { maxLength: 6 }).map((pairs) => pairs.join("&"));
})();

describe.each(getRoutes)("$name with a random query string", (route) => {
  it("never answers with a 5xx, and answers any 4xx in the error shape", { timeout: 60_000 }, async () => {
    const path = queriedPath(route);
    const before = await snapshot("default", fixtures.attention);
    await property(`${route.name} random query strings`, rawQuery, RUNS.queryRandom, async (query) => {
      const response = await send({ route, tenant: "default", path }, { contentType: null }, `${path}?${query}`);
      expect(response.status, `?${query}: ${response.text.slice(0, 300)}`).toBeLessThan(500);
      if (response.status >= 400) expectErrorShape(response, response.status, undefined, `?${query}`);
      else expect(response.status, `?${query}`).toBe(200);
    });
    expect(await snapshot("default", fixtures.attention)).toEqual(before);
  });
});

/** Accept headers built from media types, parameters, q-values and printable junk. */
const acceptHeader: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom("text/plain", "application/json", "*/*", "text/*", "application/openmetrics-text", ";q=0", ";q=0.5", ";q=abc", ";version=0.0.4", ",", " ", ""),
      fc.stringMatching(/^[ -~]{0,12}$/),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join(""));

describe("GET /v1/metrics with a random Accept header", () => {
  it("always answers 200, as JSON or in Prometheus' text format", { timeout: 60_000 }, async () => {
    await property("GET /v1/metrics random Accept headers", acceptHeader, 60, async (accept) => {
      const response = await rawRequest("GET", "/v1/metrics", { headers: { ...bearer("default"), Accept: accept } });
      const type = response.headers.get("Content-Type") ?? "";
      expect(response.status, `Accept: ${accept}: ${response.text.slice(0, 300)}`).toBe(200);
      if (type.startsWith("text/plain")) expect(response.text, `Accept: ${accept}`).toMatch(/^# HELP shepherd_/);
      else expect(response.body?.workflows, `Accept: ${accept} gave ${type}`).toBeDefined();
    });
  });
});

/** A series range: instants as epoch ms or ISO 8601 (some of them the same minute), and steps of whole minutes or not. */
const seriesRange = fc.record(
  {
    from: fc.integer({ min: 0, max: 4_102_444_800_000 }),
    span: fc.oneof(fc.integer({ min: -3_600_000, max: 3 * 86_400_000 }), fc.integer({ min: 1, max: 180 }).map((minutes) => minutes * 60_000)),
    stepMs: fc.oneof(fc.integer({ min: 1, max: 1_440 }).map((minutes) => minutes * 60_000), fc.integer({ min: -1, max: 200_000_000 })),
    iso: fc.boolean(),
  },
  { requiredKeys: ["from", "span", "iso"] },
);

describe("GET /v1/metrics/series with random ranges", () => {
  it("answers every step of the range, gaps as zeros, or a 400 naming from, to or stepMs", { timeout: 60_000 }, async () => {
    await property("GET /v1/metrics/series random ranges", seriesRange, 80, async ({ from, span, stepMs, iso }) => {
      const instant = (ms: number) => (iso ? new Date(ms).toISOString() : String(ms));
      const query = new URLSearchParams({ from: instant(from), to: instant(from + span), ...(stepMs === undefined ? {} : { stepMs: String(stepMs) }) });
      const response = await rawRequest("GET", `/v1/metrics/series?${query}`, { headers: bearer("default") });
      const context = `?${query}`;
      if (response.status === 400) {
        expectErrorShape(response, 400, "validation_failed", context);
        expect(response.body.error.details.map((issue: { path: string[] }) => issue.path[0]), context).toEqual(expect.arrayContaining([expect.stringMatching(/^(from|to|stepMs)$/)]));
        return;
      }
      expect(response.status, `${context}: ${response.text.slice(0, 300)}`).toBe(200);
      const { body } = response;
      const step = stepMs ?? 60_000;
      expect(body.from, context).toBe(Math.floor(from / 60_000) * 60_000);
      expect(body.series.length, context).toBe(Math.ceil((from + span - body.from) / step));
      expect(body.series.length, context).toBeLessThanOrEqual(1_440);
      expect(body.to, context).toBe(body.from + body.series.length * step);
      body.series.forEach((point: { at: number }, i: number) => expect(point.at, context).toBe(body.from + i * step));
    });
  });
});

/** The list's filters: a created range (epoch ms or ISO 8601, sometimes reversed or no date) and an id prefix. */
const listFilters = fc.record(
  {
    after: fc.integer({ min: 0, max: 4_102_444_800_000 }),
    span: fc.integer({ min: -86_400_000, max: 4_102_444_800_000 }),
    iso: fc.boolean(),
    prefix: fc.oneof(fc.constantFrom("fuzz", "fuzz-default", "f", "z", "fuzz-default-"), fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,12}$/), fc.string({ maxLength: 6 })),
    limit: fc.integer({ min: 1, max: 100 }),
  },
  { requiredKeys: ["iso", "limit"] },
);

describe("GET /v1/workflows with random created ranges and id prefixes", () => {
  it("lists only workflows that match every filter, or answers 400 naming createdAfter, createdBefore or idPrefix", { timeout: 60_000 }, async () => {
    await property("GET /v1/workflows random filters", listFilters, 80, async ({ after, span, iso, prefix, limit }) => {
      const instant = (ms: number) => (iso ? new Date(ms).toISOString() : String(ms));
      const before = after !== undefined && span !== undefined ? Math.max(0, after + span) : undefined;
      const query = new URLSearchParams({ limit: String(limit) });
      if (after !== undefined) query.set("createdAfter", instant(after));
      if (before !== undefined) query.set("createdBefore", instant(before));
      if (prefix !== undefined) query.set("idPrefix", prefix);
      const response = await rawRequest("GET", `/v1/workflows?${query}`, { headers: bearer("default") });
      const context = `?${query}`;
      if (response.status === 400) {
        expectErrorShape(response, 400, "validation_failed", context);
        expect(response.body.error.details.map((issue: { path: string[] }) => issue.path[0]), context).toEqual(expect.arrayContaining([expect.stringMatching(/^(createdAfter|createdBefore|idPrefix)$/)]));
        return;
      }
      expect(response.status, `${context}: ${response.text.slice(0, 300)}`).toBe(200);
      for (const workflow of response.body.workflows as { id: string; createdAt: number }[]) {
        if (prefix !== undefined) expect(workflow.id.startsWith(prefix), context).toBe(true);
        if (after !== undefined) expect(workflow.createdAt, context).toBeGreaterThanOrEqual(after);
        if (before !== undefined) expect(workflow.createdAt, context).toBeLessThan(before);
      }
    });
  });
});

describe("path parameters", () => {
  const withParams = v1Routes.filter((route) => route.pathParams.length > 0);

  it("never reach a workflow or answer 2xx or 5xx when one of them is made up", { timeout: 60_000 }, async () => {
    const segment = fc.oneof(
      fc.string({ maxLength: 40 }).map(encodeURIComponent),
      fc.string({ maxLength: 20, unit: "grapheme" }),
      fc.constantFrom("", ".", "..", "%2e%2e", "%2F", "a%2Fb", "%", "%zz", "%00", "a;b", "a%3Bb", "x".repeat(3000), "a.b.c", "e30.e30", `${fixtures?.waiting.token ?? ""}x`),
      breaking(ID_RE.source),
    );
    const arbitrary = fc.tuple(fc.constantFrom(...withParams), fc.nat(), segment);
    const beforeAttention = await snapshot("default", fixtures.attention);
    const beforeWaiting = await snapshot("default", fixtures.waiting.id);
    const beforeDefinitions = await listDefinitions("default");
    await property("path parameters", arbitrary, RUNS.pathParams, async ([route, pick, made]) => {
      const values: Record<string, string> = { id: fixtures.attention, stepId: "charge", token: fixtures.waiting.token, name: fixtures.definition, version: "1", pool: "fuzz-pool", n: "1" };
      const param = route.pathParams[pick % route.pathParams.length]!.name;
      fc.pre(made !== values[param] && made !== encodeURIComponent(values[param]!));
      // A dot segment as the last one is resolved by the URL itself: versions/.. is GET /v1/definitions/{name}, a
      // real route with real values, not a made-up parameter.
      fc.pre(!(param === "version" && /^(\.|%2e){1,2}$/i.test(made)));
      // Filled by hand, so the made-up segment goes out as generated (escapes and all).
      const path = route.path.replace(/\{([^}]+)\}/g, (_m, name: string) => (name === param ? made : encodeURIComponent(values[name]!)));
      // A PUT names what it makes: any well-formed id is a real one, and makes a webhook. Judged as the URL
      // sends it, which drops a trailing space or tab ("a " is PUT /v1/webhooks/a).
      fc.pre(!(route.name === WEBHOOK && ID_RE.test(decodedSegment(sentWebhookId(path)))));
      // A poll names its pool the same way: any well-formed name is a pool (one no task was offered to yet is empty).
      fc.pre(!(route.name === "POST /v1/pools/{pool}/tasks/poll" && ID_RE.test(decodedSegment(sentPoolName(path)))));
      const body = VALID_BODIES[route.name]?.(uniqueId("fuzz"));
      const response = await send({ route, tenant: "default", path }, body ? { body: JSON.stringify(body) } : { contentType: null }, path);
      expectErrorShape(response, [400, 401, 404, 405, 409, 410], undefined, `${route.name} with ${param}=${JSON.stringify(made.slice(0, 80))}`);
    });
    expect(await snapshot("default", fixtures.attention)).toEqual(beforeAttention);
    expect(await snapshot("default", fixtures.waiting.id)).toEqual(beforeWaiting);
    expect(await listDefinitions("default")).toEqual(beforeDefinitions);
  });
});
