// Who may call what. The routes come from the OpenAPI document itself, so a route added later is covered
// by every check here without anyone remembering to list it; the document must also list exactly the
// routes of the contract, so a route cannot leave the document to escape these checks either.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/api/app";
import { toBase64Url } from "../../src/domain/security/base64url";
import { signTaskToken, type TaskTokenClaims } from "../../src/domain/security/task-token";
import { breakerName } from "../../src/breakers/breaker-rpc";
import { api, bearer, snapshot, startAs, TOKENS, uniqueId, type TestTenant } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { deliverStarts } from "../helpers/starts";
import { tokenClaims } from "../helpers/tasks";
import {
  EXPECTED_ROUTES,
  expectErrorShape,
  fillPath,
  isTaskRoute,
  loadOpenApi,
  rawRequest,
  routesOf,
  toRawResponse,
  type RawResponse,
  type Route,
} from "../helpers/routes";

const doc = await loadOpenApi();
const routes = routesOf(doc);
const apiRoutes = routes.filter((route) => route.path.startsWith("/v1/") && !isTaskRoute(route));
const taskRoutes = routes.filter(isTaskRoute);
const workflowRoutes = apiRoutes.filter((route) => route.path.startsWith("/v1/workflows/{id}"));
const scheduleRoutes = apiRoutes.filter((route) => route.path.startsWith("/v1/schedules/{id}"));
/** A PUT names the caller's own webhook, so it creates one rather than reach another tenant's. */
const webhookRoutes = apiRoutes.filter((route) => route.path.startsWith("/v1/webhooks/{id}") && route.method !== "PUT");

/** Long enough that nothing times out while a test looks at a workflow: its state only changes when asked. */
const STILL = {
  retry: { maxAttempts: 1 },
  timeouts: { scheduleToStartMs: 600_000, startToCloseMs: 600_000, heartbeatMs: 600_000 },
};

/** `/fail-now` answers 422 (a permanent failure), `/wait` 202 (the remote reports through its task token). */
let remote: ReturnType<typeof mockRemote>;
beforeAll(() => {
  remote = mockRemote((call) => (new URL(call.url).pathname === "/fail-now" ? json({ error: "declined" }, 422) : json({ accepted: true }, 202)));
});
afterAll(() => vi.restoreAllMocks());

function as(tenant: TestTenant) {
  return { headers: bearer(tenant) };
}

function escalatingDefinition(name = "auth-escalates") {
  return { name, onFailure: "escalate", defaults: STILL, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/fail-now` } }] };
}

function waitingDefinition(name = "auth-waits") {
  return { name, onFailure: "escalate", defaults: STILL, steps: [{ id: "render", action: { type: "http", url: `${REMOTE}/wait` } }] };
}

async function waitForOwnStatus(tenant: TestTenant, id: string, status: string, stepStatus?: string) {
  return vi.waitFor(
    async () => {
      const { workflow } = await snapshot(tenant, id);
      expect(workflow.status).toBe(status);
      if (stepStatus) expect(workflow.steps[0].status).toBe(stepStatus);
      return workflow;
    },
    { timeout: 10_000, interval: 20 },
  );
}

/** A workflow of `tenant` in needs_attention with a failed step "charge": retry, skip and compensate would all act on it. */
async function needsAttention(tenant: TestTenant) {
  const id = await startAs(tenant, escalatingDefinition());
  const workflow = await waitForOwnStatus(tenant, id, "needs_attention");
  expect(workflow.steps[0]).toMatchObject({ id: "charge", status: "failed" });
  return id;
}

/**
 * A body each route accepts, so that a refusal is about who is asking, not about what was sent. `startId` names
 * the workflow a start would create and the definition a publish would store (its path's {name}).
 */
function validBody(route: Route, startId: string): string | undefined {
  if (!route.body) return undefined;
  const bodies: Record<string, unknown> = {
    "POST /v1/workflows": { id: startId, definition: escalatingDefinition("auth-never-started") },
    "POST /v1/workflows/batch": { workflows: [{ id: startId, definition: escalatingDefinition("auth-never-started") }] },
    "PUT /v1/definitions/{name}": escalatingDefinition(startId),
    "POST /v1/schedules": { id: startId, cron: "0 3 * * *", workflow: { definition: escalatingDefinition("auth-scheduled") } },
    "PUT /v1/webhooks/{id}": { url: `${REMOTE}/hooks`, events: ["workflow.completed"] },
    "POST /v1/workflows/{id}/steps/{stepId}/skip": { output: { skippedBy: "test" }, reason: "auth test" },
    "POST /v1/workflows/{id}/steps/{stepId}/retry": { reason: "auth test" },
    "POST /v1/workflows/{id}/events": { event: "approved", payload: { by: "test" }, id: "auth-event", reason: "auth test" },
    "POST /v1/workflows/{id}/cancel": { reason: "auth test" },
    "POST /v1/workflows/{id}/compensate": { reason: "auth test" },
    "POST /v1/workflows/{id}/pause": { reason: "auth test" },
    "POST /v1/workflows/{id}/resume": { reason: "auth test" },
    "POST /v1/workflows/{id}/terminate": { reason: "auth test" },
    "POST /v1/workflows/{id}/redrive": { fromStep: "charge", reason: "auth test" },
    // No wait: a refusal is answered before the poll would wait, and the control's poll returns at once.
    "POST /v1/pools/{pool}/tasks/poll": { workerId: "auth-worker", waitMs: 0 },
    // Aimed at the id a start would create: the control's job matches nothing, and a refused one must make no job.
    "POST /v1/bulk": { action: "cancel", filter: { ids: [startId] }, reason: "auth test" },
  };
  if (!(route.name in bodies)) throw new Error(`no valid body known for ${route.name}: add one`);
  return JSON.stringify(bodies[route.name]);
}

describe("the routes the OpenAPI document declares", () => {
  it("are exactly the routes of the v1 contract", () => {
    expect(routes.map((route) => route.name).sort()).toEqual([...EXPECTED_ROUTES].sort());
  });

  it("define bearerAuth as HTTP bearer authentication", () => {
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it.each(apiRoutes)("declare that $name needs a bearer token", (route) => {
    expect(route.security).toEqual([{ bearerAuth: [] }]);
  });

  it.each(taskRoutes)("declare no API-token security for $name, which its task token authorises", (route) => {
    // No top-level `security` either: it would apply to an operation that declares none.
    expect((doc as { security?: unknown }).security).toBeUndefined();
    expect(route.security ?? []).toEqual([]);
  });
});

/** Authorization headers that are not `Bearer <one token>`. */
const MALFORMED: [string, string][] = [
  ["an empty header", ""],
  ["a Basic credential", "Basic x"],
  ["Basic with a valid token's tenant and token", `Basic ${btoa(`default:${TOKENS.default}`)}`],
  ["the scheme alone", "Bearer"],
  ["two tokens after a double space", "Bearer  a b"],
  ["a valid token followed by another", `Bearer ${TOKENS.default} ${TOKENS.alpha}`],
  ["a valid token without the scheme", TOKENS.default],
  ["a valid token after another scheme", `Token ${TOKENS.default}`],
];

/** Well-formed bearer credentials that are not a configured token. */
const WRONG: [string, string][] = [
  ["an unknown token", "Bearer not-a-token"],
  ["a valid token with a suffix", `Bearer ${TOKENS.default}x`],
  ["a valid token without its last character", `Bearer ${TOKENS.default.slice(0, -1)}`],
  ["a valid token in upper case", `Bearer ${TOKENS.default.toUpperCase()}`],
  ["the tenant:token pair", `Bearer default:${TOKENS.default}`],
  ["the tenant's name", "Bearer default"],
  ["the whole API_TOKENS setting", `Bearer ${Object.entries(TOKENS).map(([tenant, token]) => `${tenant}:${token}`).join(",")}`],
];

function expectUnauthorized(response: RawResponse, context: string) {
  expectErrorShape(response, 401, "unauthorized", context);
  expect(response.headers.get("WWW-Authenticate"), context).toMatch(/^Bearer\b/);
}

describe.each(apiRoutes)("$name without a valid API token", (route) => {
  let target: string;
  let before: Awaited<ReturnType<typeof snapshot>>;
  const startId = uniqueId("never-started");

  beforeAll(async () => {
    target = await needsAttention("default");
    before = await snapshot("default", target);
  });

  /** Sends the route a request that would succeed with a valid token (a real workflow, a real step, a valid body). */
  function send(authorization: string | undefined, overrides: { params?: Record<string, string>; body?: string; query?: string } = {}) {
    const headers = new Headers();
    if (authorization !== undefined) headers.set("Authorization", authorization);
    const body = route.method === "GET" ? undefined : (overrides.body ?? validBody(route, startId));
    if (body !== undefined) headers.set("Content-Type", "application/json");
    const path = fillPath(route.path, overrides.params ?? { id: target, stepId: "charge", name: startId, version: "1", pool: "auth-pool", n: "1" }) + (overrides.query ?? "");
    return rawRequest(route.method, path, { headers, ...(body === undefined ? {} : { body }) });
  }

  /** Nothing was started or published under the id the body names, for any tenant, and the target did not move. */
  async function expectNothingChanged() {
    expect(await snapshot("default", target)).toEqual(before);
    for (const tenant of Object.keys(TOKENS) as TestTenant[]) {
      expect((await api("GET", `/v1/workflows/${startId}`, undefined, as(tenant))).status).toBe(404);
      expect((await api("GET", `/v1/definitions/${startId}`, undefined, as(tenant))).status).toBe(404);
      expect((await api("GET", `/v1/schedules/${startId}`, undefined, as(tenant))).status).toBe(404);
      expect((await api("GET", `/v1/webhooks/${startId}`, undefined, as(tenant))).status).toBe(404);
      const jobs = (await api("GET", "/v1/bulk?limit=100", undefined, as(tenant))).body.jobs as { filter: { ids?: string[] } }[];
      expect(jobs.filter((job) => job.filter.ids?.includes(startId))).toEqual([]);
    }
  }

  it("is refused with 401, the error body and a WWW-Authenticate challenge when Authorization is missing", async () => {
    const response = await send(undefined);

    expectUnauthorized(response, "no Authorization");
    expect(response.body.error.message).toMatch(/Authorization: Bearer/);
    await expectNothingChanged();
  });

  it.each(MALFORMED)("is refused with 401 for a malformed header: %s", async (name, authorization) => {
    expectUnauthorized(await send(authorization), name);
    await expectNothingChanged();
  });

  it.each(WRONG)("is refused with 401 for a token that is not configured: %s", async (name, authorization) => {
    expectUnauthorized(await send(authorization), name);
    await expectNothingChanged();
  });

  it("is refused with 401 before the path, the query or the body are looked at", async () => {
    const invalid = { params: { id: "-not an id", stepId: "-not an id", name: "-not a name", version: "0", pool: "-not a pool", n: "0" }, body: '{"truncated": ', query: "?limit=0&status=nope" };

    expectUnauthorized(await send(undefined, invalid), "invalid path, query and body");
    await expectNothingChanged();
  });

  it("gets past authentication with a valid token (the control for the refusals above)", async () => {
    // An unknown workflow and definition and a fresh start id, so the target and the start id above stay untouched.
    const controlId = uniqueId("control");
    const response = await send(bearer("default").Authorization, {
      params: { id: controlId, stepId: "charge", name: controlId, version: "1", pool: controlId, n: "1" },
      ...(route.body ? { body: validBody(route, controlId) } : {}),
    });

    const creates = ["POST /v1/workflows", "PUT /v1/definitions/{name}", "POST /v1/schedules", "PUT /v1/webhooks/{id}"].includes(route.name);
    const accepts = route.name === "POST /v1/bulk";
    expect(response.status, response.text.slice(0, 300)).toBe(creates ? 201 : accepts ? 202 : /\{(id|name)\}/.test(route.path) ? 404 : 200);
    if (response.status === 404) expect(response.body.error.code).toBe("not_found");
    // Let a started control workflow settle before the fake remote is taken away.
    const started = route.name === "POST /v1/workflows/batch" ? response.body.results?.[0]?.status === 201 : route.name === "POST /v1/workflows" && response.status === 201;
    if (started) await waitForOwnStatus("default", controlId, "needs_attention");
    // And a control webhook goes, so that no later workflow of the file posts to it once the fake remote is gone.
    if (route.name === "PUT /v1/webhooks/{id}" && response.status === 201) await api("DELETE", `/v1/webhooks/${controlId}`);
  });
});

describe("case 20 (API auth and tenancy): a workflow of another tenant", () => {
  let owned: string;

  beforeAll(async () => {
    owned = await needsAttention("alpha");
  });

  it("is reached through exactly the routes of the contract that take a workflow id", () => {
    expect(workflowRoutes.map((route) => route.name).sort()).toEqual(EXPECTED_ROUTES.filter((name) => name.includes(" /v1/workflows/{id}")).sort());
  });

  it.each(workflowRoutes)("is a 404 not_found for $name and stays as its owner left it", async (route) => {
    const before = await snapshot("alpha", owned);
    // A body the route accepts, so that only whose workflow it is can make the answer a 404.
    const body = validBody(route, uniqueId("beta-start"));
    const response = await api(route.method, fillPath(route.path, { id: owned, stepId: "charge", pool: "auth-pool", n: "1" }), body, as("beta"));

    expect(response.status, JSON.stringify(response.body)).toBe(404);
    expect(response.body.error.code).toBe("not_found");
    expect(await snapshot("alpha", owned)).toEqual(before);
    expect(before.status).toBe("needs_attention");
  });

  it("does not stop the other tenant from starting its own workflow under the same id", async () => {
    const shared = await needsAttention("alpha");
    const before = await snapshot("alpha", shared);

    const started = await api("POST", "/v1/workflows", { id: shared, definition: waitingDefinition("beta-own") }, as("beta"));

    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body).toMatchObject({ id: shared, name: "beta-own" });
    await waitForOwnStatus("beta", shared, "running", "waiting");
    expect(await snapshot("alpha", shared)).toEqual(before);
    expect(before.workflow.name).toBe("auth-escalates");
  });
});

describe("case 20 (API auth and tenancy): a schedule of another tenant", () => {
  const owned = uniqueId("alpha-schedule");
  const stored = async () => (await api("GET", `/v1/schedules/${owned}`, undefined, as("alpha"))).body;

  beforeAll(async () => {
    const created = await api("POST", "/v1/schedules", { id: owned, cron: "0 3 * * *", workflow: { definition: escalatingDefinition("auth-scheduled") } }, as("alpha"));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });

  it("is reached through the schedule routes that take an id", () => {
    expect(scheduleRoutes.map((route) => route.name).sort()).toEqual(EXPECTED_ROUTES.filter((name) => name.includes(" /v1/schedules/{id}")).sort());
  });

  it.each(scheduleRoutes)("is a 404 not_found for $name and stays as its owner left it", async (route) => {
    const before = await stored();
    const response = await api(route.method, fillPath(route.path, { id: owned }), undefined, as("beta"));

    expect(response.status, JSON.stringify(response.body)).toBe(404);
    expect(response.body.error.code).toBe("not_found");
    expect(await stored()).toEqual(before);
    expect(before).toMatchObject({ id: owned, paused: false, recent: [] });
  });

  it("is not in the other tenant's list", async () => {
    const listed = await api("GET", "/v1/schedules?limit=100", undefined, as("beta"));
    expect(listed.status).toBe(200);
    expect(listed.body.schedules.map((schedule: { id: string }) => schedule.id)).not.toContain(owned);
  });
});

describe("case 20 (API auth and tenancy): a webhook of another tenant", () => {
  const owned = uniqueId("alpha-webhook");
  const stored = async () => (await api("GET", `/v1/webhooks/${owned}`, undefined, as("alpha"))).body;

  beforeAll(async () => {
    const created = await api("PUT", `/v1/webhooks/${owned}`, { url: `${REMOTE}/hooks`, events: ["workflow.*"] }, as("alpha"));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });
  afterAll(() => api("DELETE", `/v1/webhooks/${owned}`, undefined, as("alpha")));

  it("is reached through the webhook routes that take an id", () => {
    expect(webhookRoutes.map((route) => route.name).sort()).toEqual(EXPECTED_ROUTES.filter((name) => name.includes(" /v1/webhooks/{id}") && !name.startsWith("PUT ")).sort());
  });

  it.each(webhookRoutes)("is a 404 not_found for $name and stays as its owner left it", async (route) => {
    const before = await stored();
    const response = await api(route.method, fillPath(route.path, { id: owned }), undefined, as("beta"));

    expect(response.status, JSON.stringify(response.body)).toBe(404);
    expect(response.body.error.code).toBe("not_found");
    expect(await stored()).toEqual(before);
    expect(before).toMatchObject({ id: owned, events: ["workflow.*"] });
  });

  it("is not in the other tenant's list", async () => {
    const listed = await api("GET", "/v1/webhooks", undefined, as("beta"));
    expect(listed.status).toBe(200);
    expect(listed.body.webhooks.map((webhook: { id: string }) => webhook.id)).not.toContain(owned);
  });
});

describe("case 20 (API auth and tenancy): the breakers of another tenant's target hosts", () => {
  it("are not in the other tenants' GET /v1/targets", async () => {
    const host = `${uniqueId("auth-target")}.example`;
    // One transient failure reported for alpha, with a threshold of 1: alpha's breaker of that host opens and is listed.
    const call = { tenant: "alpha", host, settings: { failures: 1, openMs: 30_000 }, workflowId: "auth", stepId: "s", attempt: 1 };
    await env.BREAKERS.getByName(breakerName("alpha", host)).recordFailure(call);
    const hostsOf = async (tenant: TestTenant) => (await api("GET", "/v1/targets", undefined, as(tenant))).body.targets.map((target: { host: string }) => target.host);
    await vi.waitFor(async () => expect(await hostsOf("alpha")).toContain(host), { timeout: 5_000, interval: 20 });

    for (const tenant of ["beta", "default"] as const) expect(await hostsOf(tenant)).not.toContain(host);
  });
});

describe("case 20 (API auth and tenancy): the start dead letters of another tenant", () => {
  it("are not in the other tenants' GET /v1/starts/dead-letters, even with the owner's cursor", async () => {
    const bad = (n: number) => ({ id: `auth-dead-${n}`, body: { tenant: "alpha", start: { definition: { name: "no-steps", steps: [] } } } });
    await deliverStarts([bad(1), bad(2)]);
    const ownPage = await api("GET", "/v1/starts/dead-letters?limit=1", undefined, as("alpha"));
    expect(ownPage.body.deadLetters.map((letter: { messageId: string }) => letter.messageId)).toEqual(["auth-dead-2"]);

    for (const tenant of ["beta", "default"] as const) {
      const listed = await api("GET", `/v1/starts/dead-letters?cursor=${ownPage.body.nextCursor}`, undefined, as(tenant));
      expect(listed.status).toBe(200);
      expect(listed.body.deadLetters.map((letter: { messageId: string }) => letter.messageId)).not.toContain("auth-dead-1");
      expect((await api("GET", "/v1/starts/dead-letters", undefined, as(tenant))).body.deadLetters).not.toContainEqual(expect.objectContaining({ tenant: "alpha" }));
    }
  });
});

describe("case 20 (API auth and tenancy): a bulk job of another tenant", () => {
  let owned: string;

  beforeAll(async () => {
    const created = await api("POST", "/v1/bulk", { action: "pause", filter: { name: uniqueId("auth-bulk") } }, as("alpha"));
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    owned = created.body.id;
  });

  it("is a 404 not_found for GET /v1/bulk/{id}", async () => {
    const response = await api("GET", `/v1/bulk/${owned}`, undefined, as("beta"));

    expect(response.status, JSON.stringify(response.body)).toBe(404);
    expect(response.body.error.code).toBe("not_found");
    expect((await api("GET", `/v1/bulk/${owned}`, undefined, as("alpha"))).body).toMatchObject({ id: owned, actor: "alpha" });
  });

  it("is not in the other tenant's list", async () => {
    const listed = await api("GET", "/v1/bulk?limit=100", undefined, as("beta"));
    expect(listed.status).toBe(200);
    expect(listed.body.jobs.map((job: { id: string }) => job.id)).not.toContain(owned);
  });
});

/** Every page of a tenant's list. */
async function listAll(tenant: TestTenant, query = ""): Promise<{ id: string; name: string }[]> {
  const all: { id: string; name: string }[] = [];
  let cursor: string | undefined;
  do {
    const params = new URLSearchParams(query);
    params.set("limit", "100");
    if (cursor) params.set("cursor", cursor);
    const page = await api("GET", `/v1/workflows?${params}`, undefined, as(tenant));
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    all.push(...page.body.workflows);
    cursor = page.body.nextCursor;
  } while (cursor);
  return all;
}

describe("the list of workflows", () => {
  const name = "alpha-only-flow";
  let ids: string[];

  beforeAll(async () => {
    ids = [await startAs("alpha", escalatingDefinition(name)), await startAs("alpha", escalatingDefinition(name))];
    for (const id of ids) await waitForOwnStatus("alpha", id, "needs_attention");
    // The index follows each workflow closely, not instantly: wait until the owner sees both.
    await vi.waitFor(async () => expect((await listAll("alpha")).map((w) => w.id)).toEqual(expect.arrayContaining(ids)), { timeout: 10_000, interval: 50 });
  });

  it("shows the owner its workflows", async () => {
    expect((await listAll("alpha", `name=${name}`)).map((w) => w.id).sort()).toEqual([...ids].sort());
  });

  it.each<[string, string]>([
    ["unfiltered", ""],
    ["filtered by the owner's definition name", `name=${name}`],
    ["filtered by their status", "status=needs_attention"],
  ])("never shows them to another tenant (%s)", async (_name, query) => {
    for (const tenant of ["beta", "default"] as const) {
      const listed = await listAll(tenant, query);
      expect(listed.map((w) => w.id)).not.toContain(ids[0]);
      expect(listed.map((w) => w.id)).not.toContain(ids[1]);
      expect(listed.filter((w) => w.name === name)).toEqual([]);
    }
  });

  it("never shows them to another tenant that replays the owner's cursor", async () => {
    const first = await api("GET", `/v1/workflows?name=${name}&limit=1`, undefined, as("alpha"));
    expect(first.body.nextCursor).toEqual(expect.any(String));

    const replayed = await api("GET", `/v1/workflows?name=${name}&cursor=${first.body.nextCursor}`, undefined, as("beta"));

    expect(replayed.status).toBe(200);
    expect(replayed.body.workflows).toEqual([]);
    const unfiltered = await api("GET", `/v1/workflows?cursor=${first.body.nextCursor}&limit=100`, undefined, as("beta"));
    expect(unfiltered.body.workflows.map((w: { id: string }) => w.id)).not.toContain(ids[1]);
  });
});

/** The token the fake remote received for the workflow's first attempt. */
function tokenSentFor(id: string): string {
  const call = remote.calls.find((c) => c.headers["shepherd-workflow-id"] === id);
  const token = call?.headers["shepherd-task-token"];
  if (!token) throw new Error(`the remote received no task token for ${id}`);
  return token;
}

/** A workflow of alpha whose step "render" waits for its remote to report, and the token the remote got. */
async function waitingWorkflow() {
  const id = await startAs("alpha", waitingDefinition());
  await waitForOwnStatus("alpha", id, "running", "waiting");
  return { id, token: tokenSentFor(id) };
}

/** A body each task route accepts, and what its genuine call changes. */
const TASK_CALLS: Record<string, { body: unknown; check: (workflow: any, response: RawResponse) => void }> = {
  "POST /v1/tasks/{token}/heartbeat": {
    body: { progress: { percent: 40 } },
    check: (workflow, response) => {
      expect(response.body).toEqual({ cancelRequested: false });
      expect(workflow.steps[0].progress).toEqual({ percent: 40 });
    },
  },
  "POST /v1/tasks/{token}/complete": {
    body: { output: { url: "https://cdn.example/x.png" } },
    check: (workflow) => expect(workflow).toMatchObject({ status: "completed", output: { render: { url: "https://cdn.example/x.png" } } }),
  },
  "POST /v1/tasks/{token}/fail": {
    body: { error: { message: "GPU lost", retryable: false } },
    check: (workflow) => expect(workflow.steps[0]).toMatchObject({ status: "failed", error: { message: "GPU lost" } }),
  },
};

function taskCall(route: Route) {
  const call = TASK_CALLS[route.name];
  if (!call) throw new Error(`no valid body known for ${route.name}: add one`);
  return call;
}

/** No Authorization header: the task token alone must do. */
function callTask(route: Route, token: string) {
  return rawRequest(route.method, fillPath(route.path, { token }), {
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(taskCall(route).body),
  });
}

/** A different base64url character at `index` (mid-token, so every one of its six bits counts). */
function flipAt(text: string, index: number): string {
  const flipped = text[index] === "A" ? "B" : "A";
  return `${text.slice(0, index)}${flipped}${text.slice(index + 1)}`;
}

const encodeClaims = (claims: unknown[]) => toBase64Url(new TextEncoder().encode(JSON.stringify(claims)));

describe("case 21 (token forgery): the task routes", () => {
  let waiting: { id: string; token: string };
  let claims: TaskTokenClaims;

  beforeAll(async () => {
    waiting = await waitingWorkflow();
    const { expiresAt } = (await tokenClaims(waiting.token))!;
    claims = { tenant: "alpha", workflowId: waiting.id, stepId: "render", attempt: 1, expiresAt };
  });

  it("are given a token the test can rebuild: these claims, signed with the deployment's secret", async () => {
    // So the forgeries below differ from a genuine token only in what each of them names.
    expect(await signTaskToken(claims, env.TASK_TOKEN_SECRET)).toBe(waiting.token);
  });

  function forgeries(): [string, string][] {
    const [payload = "", signature = ""] = waiting.token.split(".");
    const randomSignature = toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
    return [
      ["a made-up token", "not-a-token"],
      ["the payload without a signature", payload],
      ["the payload with an empty signature", `${payload}.`],
      ["a forged signature", `${payload}.${randomSignature}`],
      ["the payload with one character flipped, signature kept", `${flipAt(payload, Math.floor(payload.length / 2))}.${signature}`],
      ["the claims of the next attempt, signature kept", `${encodeClaims(["alpha", waiting.id, "render", 2])}.${signature}`],
      ["the claims of another tenant, signature kept", `${encodeClaims(["beta", waiting.id, "render", 1])}.${signature}`],
      ["the signature with one character flipped", `${payload}.${flipAt(signature, Math.floor(signature.length / 2))}`],
      ["the signature cut short", `${payload}.${signature.slice(0, -4)}`],
      ["an extra part", `${waiting.token}.${signature}`],
    ];
  }

  it.each(taskRoutes)("refuse forged and altered tokens for $name with 401 and change nothing", async (route) => {
    const before = await snapshot("alpha", waiting.id);
    for (const [name, token] of forgeries()) {
      expectErrorShape(await callTask(route, token), 401, "unauthorized", name);
    }
    expect(await snapshot("alpha", waiting.id)).toEqual(before);
  });

  it.each(taskRoutes)("refuse, for $name, a token for another tenant's workflow re-signed with a wrong secret", async (route) => {
    const before = await snapshot("alpha", waiting.id);
    for (const secret of ["wrong-secret", `${env.TASK_TOKEN_SECRET}x`, TOKENS.beta]) {
      const token = await signTaskToken(claims, secret);
      expectErrorShape(await callTask(route, token), 401, "unauthorized", `signed with ${secret}`);
    }
    expect(await snapshot("alpha", waiting.id)).toEqual(before);
  });

  it.each(taskRoutes)("accept the genuine token the remote received for $name, with no API token", async (route) => {
    const { id, token } = await waitingWorkflow();

    const response = await callTask(route, token);

    expect(response.status, response.text).toBe(200);
    taskCall(route).check((await snapshot("alpha", id)).workflow, response);
  });
});

/** Calls a fresh app directly with the bindings given: the pool's bindings cannot change per test. */
async function callApp(bindings: Partial<Env>, method: string, path: string, init: { headers?: HeadersInit; body?: string } = {}) {
  const request = new Request(`http://shepherd.test${path}`, { method, ...init });
  return toRawResponse(await createApp().fetch(request, { ...env, ...bindings }, createExecutionContext()));
}

/** Each API route called as it would be with a valid token: the setting, not the request, must be the problem. */
function callEveryRoute(bindings: Partial<Env>, token: string) {
  return Promise.all(
    apiRoutes.map(async (route) => {
      const body = validBody(route, uniqueId("unconfigured"));
      const headers = { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) };
      const unknown = uniqueId("unconfigured");
      const path = fillPath(route.path, { id: unknown, stepId: "charge", name: unknown, version: "1", pool: "auth-pool", n: "1" });
      return { route, response: await callApp(bindings, route.method, path, { headers, ...(body === undefined ? {} : { body }) }) };
    }),
  );
}

describe("a deployment without API tokens", () => {
  it("lets a request through when API_TOKENS is set (the control for the calls below)", async () => {
    const response = await callApp({}, "GET", "/v1/workflows", { headers: bearer("default") });
    expect(response.status, response.text).toBe(200);
  });

  it.each<[string, string | undefined]>([
    ["unset", undefined],
    ["empty", ""],
    ["only separators", " , ,"],
  ])("refuses every API route with 401 saying how to set API_TOKENS when it is %s", async (_name, setting) => {
    for (const { route, response } of await callEveryRoute({ API_TOKENS: setting }, TOKENS.default)) {
      expectUnauthorized(response, route.name);
      expect(response.body.error.message, route.name).toMatch(/API_TOKENS/);
      expect(response.body.error.message, route.name).toMatch(/wrangler secret put API_TOKENS/);
    }
  });
});

interface MalformedSetting {
  name: string;
  setting: string;
  entry: number;
  /** What the setting holds that must never be echoed. */
  secrets: string[];
}

const MALFORMED_SETTINGS: MalformedSetting[] = [
  { name: "an entry without a colon", setting: "alpha:s3cret-alpha-1,s3cret-bare-2", entry: 2, secrets: ["s3cret-alpha-1", "s3cret-bare-2"] },
  { name: "an entry without a tenant", setting: "alpha:s3cret-alpha-1,:s3cret-orphan-2", entry: 2, secrets: ["s3cret-alpha-1", "s3cret-orphan-2"] },
  { name: "an entry without a token", setting: "alpha:s3cret-alpha-1,beta:", entry: 2, secrets: ["s3cret-alpha-1"] },
  { name: "a tenant with a space", setting: "bad tenant:s3cret-first-1,beta:s3cret-beta-2", entry: 1, secrets: ["s3cret-first-1", "s3cret-beta-2"] },
  { name: "a token with a space", setting: "alpha:s3cret-alpha-1,beta:s3cret half-2,gamma:s3cret-gamma-3", entry: 2, secrets: ["s3cret-alpha-1", "s3cret half-2", "s3cret-gamma-3"] },
  { name: "a token used twice", setting: "alpha:s3cret-shared-1,beta:s3cret-shared-1", entry: 2, secrets: ["s3cret-shared-1"] },
  { name: "a third entry that is broken", setting: "alpha:s3cret-alpha-1,beta:s3cret-beta-2,s3cret-gamma-3", entry: 3, secrets: ["s3cret-alpha-1", "s3cret-beta-2", "s3cret-gamma-3"] },
];

describe("a deployment with a malformed API_TOKENS", () => {
  it.each(MALFORMED_SETTINGS)("refuses every API route with 503 not_configured naming entry $entry, for $name", async ({ setting, entry, secrets }) => {
    // The caller presents a token the setting does hold: a broken setting fails closed all the same.
    for (const { route, response } of await callEveryRoute({ API_TOKENS: setting }, "s3cret-alpha-1")) {
      expectErrorShape(response, 503, "not_configured", route.name);
      expect(response.body.error.message, route.name).toMatch(new RegExp(`API_TOKENS entry ${entry}\\b`));
      const echoed = [response.text, ...[...response.headers].map(([key, value]) => `${key}: ${value}`)].join("\n");
      for (const secret of secrets) expect(echoed, route.name).not.toContain(secret);
    }
  });
});
