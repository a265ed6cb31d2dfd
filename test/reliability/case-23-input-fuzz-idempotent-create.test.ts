import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/api/app";
import { api, bearer, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { describeResponse, expectErrorShape, toRawResponse, type RawResponse } from "../helpers/routes";
import { FAST } from "../helpers/policies";
import { boundTaskQueues, taskQueueOf } from "../helpers/queue";

// The bulk of the cases go to the Worker's own Hono app with the per-tenant write limit taken out: the
// limiter's counters are shared by every test file of a run (row 24 tests it), and this row is about what a
// body contains. No task message reaches the queue here, so no agent runs: the row is about what the front
// door and the object accept, and a generated definition must not start real work.
const app = createApp();
const { TENANT_WRITE_LIMIT: _shared, ...unlimitedEnv } = env;

async function post(body: unknown, raw?: string): Promise<RawResponse> {
  const request = new Request("http://shepherd.test/v1/workflows", {
    method: "POST",
    headers: { ...bearer(), "Content-Type": "application/json" },
    body: raw ?? JSON.stringify(body),
  });
  // A deployment without the rate-limit binding: what the generated Env types cannot describe.
  return toRawResponse(await app.fetch(request, unlimitedEnv as unknown as Env, createExecutionContext()));
}

const cases = { valid: 0, mutated: 0, randomJson: 0, notJson: 0 };
beforeAll(() => {
  for (const queue of boundTaskQueues()) {
    vi.spyOn(queue, "sendBatch").mockResolvedValue({} as QueueSendBatchResponse);
    vi.spyOn(queue, "send").mockResolvedValue({} as QueueSendResponse);
  }
});
afterAll(() => {
  vi.restoreAllMocks();
  const total = cases.valid + cases.mutated + cases.randomJson + cases.notJson;
  console.log(`case 23: fast-check ran ${total} cases (${cases.valid} valid starts, ${cases.mutated} single-field mutations, ${cases.randomJson} random JSON bodies, ${cases.notJson} non-JSON bodies)`);
});

// ---------------------------------------------------------------------------------------------------------
// Schema-shaped start bodies: every field of the contract, optional ones present or not. Deadlines are at
// least a minute, so nothing a generated workflow does moves while the file runs.

const ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,40}$/;
const idArb = fc.stringMatching(ID);
const LONG = { min: 60_000, max: 604_800_000 };
/** A `{{` or `}}`: a template, or a mistyped one (a 400 of its own). */
const TEMPLATE_BRACES = /\{\{|\}\}/;

/** Whether any string of a JSON value holds a template's braces (its keys are never read as templates). */
function holdsTemplateBraces(value: unknown): boolean {
  if (typeof value === "string") return TEMPLATE_BRACES.test(value);
  if (Array.isArray(value)) return value.some(holdsTemplateBraces);
  return value !== null && typeof value === "object" && Object.values(value).some(holdsTemplateBraces);
}

/**
 * JSON as a client sends it (-0 comes back as 0, so it is sent as 0), without template braces: a template would
 * need a matching step or input (a graph check of its own), and a lone `{{` or `}}` is a mistyped one.
 */
const plainJson = fc
  .jsonValue({ maxDepth: 3 })
  .map((value) => JSON.parse(JSON.stringify(value)) as unknown)
  .filter((value) => !holdsTemplateBraces(value));

const retryArb = fc.record(
  {
    maxAttempts: fc.integer({ min: 1, max: 100 }),
    initialIntervalMs: fc.integer({ min: 0, max: 86_400_000 }),
    backoffCoefficient: fc.double({ min: 1, max: 100, noNaN: true }),
    maxIntervalMs: fc.integer({ min: 0, max: 86_400_000 }),
    jitter: fc.double({ min: 0, max: 1, noNaN: true }),
  },
  { requiredKeys: [] },
);
const timeoutsArb = fc.record(
  { scheduleToStartMs: fc.integer(LONG), startToCloseMs: fc.integer(LONG), heartbeatMs: fc.integer(LONG) },
  { requiredKeys: [] },
);
const actionArb = fc.record(
  {
    type: fc.constant("http"),
    url: fc.stringMatching(/^[a-z0-9-]{1,20}$/).map((path) => `${REMOTE}/${path}`),
    method: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE"),
    headers: fc.dictionary(fc.stringMatching(/^X-[A-Za-z0-9-]{1,20}$/), fc.stringMatching(/^[ -~]{0,40}$/).filter((value) => !TEMPLATE_BRACES.test(value)), { maxKeys: 3 }),
    body: plainJson,
  },
  { requiredKeys: ["type", "url"] },
);
const stepsArb = fc.uniqueArray(idArb, { minLength: 1, maxLength: 4 }).chain((ids) =>
  fc.tuple(
    ...ids.map((id, index) =>
      fc.record(
        {
          id: fc.constant(id),
          dependsOn: fc.subarray(ids.slice(0, index)),
          action: actionArb,
          retry: retryArb,
          timeouts: timeoutsArb,
          compensate: actionArb,
        },
        { requiredKeys: ["id", "action"] },
      ),
    ),
  ),
);
const definitionArb = fc.record(
  {
    name: idArb,
    onFailure: fc.constantFrom("compensate", "escalate", "fail"),
    timeoutMs: fc.integer({ min: 60_000, max: 31_536_000_000 }),
    defaults: fc.record({ retry: retryArb, timeouts: timeoutsArb }, { requiredKeys: [] }),
    steps: stepsArb,
  },
  { requiredKeys: ["name", "steps"] },
);
type StartBody = { id: string; definition: { steps: Record<string, unknown>[] } & Record<string, unknown>; input?: unknown };
const startBodyArb: fc.Arbitrary<StartBody> = fc
  .record({ definition: definitionArb, input: plainJson }, { requiredKeys: ["definition"] })
  .map((body) => ({ id: uniqueId("fuzz"), ...body }) as StartBody);

// ---------------------------------------------------------------------------------------------------------
// Single-field mutations: one place in a valid body gets a value the contract refuses.

type Path = (string | number)[];
interface Mutation {
  /** Where the value goes. */
  path: Path;
  value: unknown;
  /** Where the refusal must point (defaults to `path`): an issue path and this one are prefixes of each other. */
  reported?: Path;
}

const badId = fc.constantFrom("", "-leading-dash", "has space", "ünïcode", "x".repeat(129), "a/b", 42, null, ["a"]);
const badDuration = fc.constantFrom(0, -1, 1.5, "60000", 604_800_001, null, true);
const STEP: Path = ["definition", "steps", 0];

const mutationArb = (body: StartBody): fc.Arbitrary<Mutation> => {
  const firstStep = body.definition.steps[0]!;
  return fc.oneof(
    badId.map((value) => ({ path: ["id"], value })),
    badId.map((value) => ({ path: ["definition", "name"], value })),
    fc.constantFrom("explode", "", 1, null).map((value) => ({ path: ["definition", "onFailure"], value })),
    fc.constantFrom(0, -1, 1.5, "1000", 31_536_000_001, null).map((value) => ({ path: ["definition", "timeoutMs"], value })),
    fc.constantFrom([], "steps", null, {}).map((value) => ({ path: ["definition", "steps"], value })),
    badId.map((value) => ({ path: [...STEP, "id"], value })),
    fc.constantFrom("ftp", "HTTP", "", null, 1).map((value) => ({ path: [...STEP, "action", "type"], value })),
    fc.constantFrom("", 5, null, "not a url", "ftp://files.example/x", `${REMOTE}/${"x".repeat(2048)}`).map((value) => ({ path: [...STEP, "action", "url"], value })),
    fc.constantFrom("TRACE", "get", "", 1).map((value) => ({ path: [...STEP, "action", "method"], value })),
    fc.constantFrom("h", [], { "": "v" }, { "X-A": 1 }, { "X-A": "x".repeat(8193) }, { "bad name": "v" }, { "X-A": "a\r\nInjected: 1" }, null).map((value) => ({ path: [...STEP, "action", "headers"], value })),
    fc.constantFrom(0, 101, 1.5, "3", -1, null).map((value) => ({ path: [...STEP, "retry", "maxAttempts"], value })),
    fc.constantFrom(-0.1, 1.1, "0.2").map((value) => ({ path: [...STEP, "retry", "jitter"], value })),
    fc.constantFrom(0.5, 101, -2).map((value) => ({ path: [...STEP, "retry", "backoffCoefficient"], value })),
    fc.constantFrom(-1, 86_400_001, 0.5).map((value) => ({ path: ["definition", "defaults", "retry", "initialIntervalMs"], value })),
    badDuration.map((value) => ({ path: [...STEP, "timeouts", "heartbeatMs"], value })),
    badDuration.map((value) => ({ path: ["definition", "defaults", "timeouts", "scheduleToStartMs"], value })),
    fc.constantFrom(["no-such-step"], [firstStep.id], "a", [1]).map((value) => ({ path: [...STEP, "dependsOn"], value })),
    fc.constantFrom({}, { type: "http" }, { url: `${REMOTE}/undo` }, "refund").map((value) => ({ path: [...STEP, "compensate"], value })),
    fc.constantFrom<Path>([...STEP, "compensation"], [...STEP, "retries"], [...STEP, "timeout"], ["definition", "default"]).map((path) => ({
      path,
      value: {},
      reported: path.slice(0, -1),
    })),
    fc.constantFrom<Path>(["bogus"], ["definition", "bogus"], [...STEP, "bogus"], [...STEP, "action", "bogus"], ["definition", "defaults", "retry", "bogus"]).map((path) => ({
      path,
      value: 1,
      reported: path.slice(0, -1),
    })),
    fc.constant<Mutation>({ path: [...STEP, "action", "body"], value: nested(70) }),
    fc.constant<Mutation>({ path: ["input"], value: nested(70) }),
    fc.constant<Mutation>({ path: ["definition", "steps", body.definition.steps.length], value: structuredClone(firstStep), reported: ["definition", "steps"] }),
  );
};

function nested(depth: number): unknown {
  let value: unknown = "deep";
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

function setAt(target: Record<string | number, unknown>, path: Path, value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (node[key] === null || typeof node[key] !== "object") node[key] = {};
    node = node[key] as Record<string | number, unknown>;
  }
  node[path.at(-1)!] = value;
}

const related = (a: Path, b: Path) => a.slice(0, b.length).every((key, i) => key === b[i]) || b.slice(0, a.length).every((key, i) => key === a[i]);

function expectRefused(response: RawResponse, mutation: Mutation, context: string) {
  expect(response.status, `${context} ${describeResponse(response)}`).toBeLessThan(500);
  expectErrorShape(response, 400, "validation_failed", context);
  const details = response.body.error.details as { path: Path; message: string }[];
  expect(details.length, context).toBeGreaterThan(0);
  for (const detail of details) {
    expect(Array.isArray(detail.path), context).toBe(true);
    expect(detail.message, context).toEqual(expect.any(String));
  }
  const reported = mutation.reported ?? mutation.path;
  expect(details.some((detail) => related(detail.path, reported)), `${context} ${JSON.stringify(details)}`).toBe(true);
}

describe("case 23: input fuzz + idempotent create", () => {
  it("starts every schema-shaped body (201), answers the identical repeat 200 with the same workflow, and a changed body 409", async () => {
    await fc.assert(
      fc.asyncProperty(startBodyArb, async (body) => {
        cases.valid += 1;
        const created = await post(body);
        expect(created.status, describeResponse(created)).toBe(201);
        expect(created.body).toMatchObject({ id: body.id, status: "running", input: body.input ?? null });
        const repeated = await post(structuredClone(body));
        expect(repeated.status, describeResponse(repeated)).toBe(200);
        expect(repeated.body).toEqual(created.body);
        const changed = await post({ ...body, input: { changed: true, was: body.input ?? null } });
        expectErrorShape(changed, 409, "conflict");
      }),
      { numRuns: 40 },
    );
  });

  it("refuses every single-field mutation of a valid body with 400 validation_failed naming the field, never a 5xx, and starts nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        startBodyArb.chain((body) => fc.tuple(fc.constant(body), mutationArb(body))),
        async ([body, mutation]) => {
          cases.mutated += 1;
          const mutated = structuredClone(body) as unknown as Record<string, unknown>;
          setAt(mutated, mutation.path, mutation.value);
          const response = await post(mutated);
          expectRefused(response, mutation, `${JSON.stringify(mutation.path)} = ${JSON.stringify(mutation.value)?.slice(0, 80)}`);
          if (typeof mutated.id === "string" && ID.test(mutated.id)) expect((await api("GET", `/v1/workflows/${mutated.id}`)).status).toBe(404);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("answers arbitrary JSON and arbitrary text with a 4xx in the contract's error shape, never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
        cases.randomJson += 1;
        const response = await post(value);
        expectErrorShape(response, 400, "validation_failed", JSON.stringify(value)?.slice(0, 80));
      }),
      { numRuns: 100 },
    );
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 60 }), async (text) => {
        cases.notJson += 1;
        const response = await post(undefined, text);
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        expectErrorShape(response, 400, parses ? "validation_failed" : "invalid_json", JSON.stringify(text));
      }),
      { numRuns: 60 },
    );
  });

  it("refuses header names and values HTTP cannot carry at create, rather than failing every attempt later", async () => {
    // `new Headers()` in the agent throws on each of these, so every attempt would fail (as retryable) at dispatch.
    const unsendable: Record<string, string>[] = [{ "bad name": "v" }, { "X-Ok(": "v" }, { "X-Ok": "line\r\nInjected: 1" }, { "X-Ok": "nul\u0000" }];
    for (const headers of unsendable) expect(() => new Headers(headers), JSON.stringify(headers)).toThrow(TypeError);
    const answers = [];
    for (const headers of unsendable) {
      const body = { id: uniqueId("headers"), definition: { name: "headers", steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a`, headers } }] } };
      answers.push({ headers, response: await post(body) });
    }
    expect(answers.map(({ headers, response }) => `${JSON.stringify(headers)} -> ${response.status}`)).toEqual(unsendable.map((headers) => `${JSON.stringify(headers)} -> 400`));
    for (const { headers, response } of answers) expectRefused(response, { path: [...STEP, "action", "headers"], value: headers }, JSON.stringify(headers));
  });

  it("runs a workflow started three times with the same id and body once, through the Worker's front door", async () => {
    const id = uniqueId("once");
    vi.mocked(taskQueueOf(id).sendBatch).mockRestore();
    const remote = mockRemote(() => json({ ok: true }));
    const body = { id, definition: { name: "once", defaults: FAST, steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }] }, input: { n: 1 } };
    const first = await api("POST", "/v1/workflows", body);
    expect(first.status).toBe(201);
    const again = await Promise.all([api("POST", "/v1/workflows", body), api("POST", "/v1/workflows", structuredClone(body))]);
    expect(again.map((response) => response.status)).toEqual([200, 200]);
    expect(again.map((response) => response.body.createdAt)).toEqual([first.body.createdAt, first.body.createdAt]);
    await waitForStatus(id, "completed");
    expect(remote.requestsFor(`${id}:a`)).toBe(1);
    const conflict = await api("POST", "/v1/workflows", { ...body, input: { n: 2 } });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe("conflict");
  });
});
