import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { api, bearer, TOKENS, uniqueId, type TestTenant } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { expectErrorShape, rawRequest } from "../helpers/routes";
import { FAST } from "../helpers/policies";

/** In the input of every workflow here: it must never appear in an answer to anyone but its owner. */
const SECRET = "s3cr3t-card-4242";

const as = (tenant: TestTenant) => ({ headers: bearer(tenant) });

const waitingDefinition = (name: string) => ({
  name,
  defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 600_000, startToCloseMs: 600_000 } },
  steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` }, compensate: { type: "http", url: `${REMOTE}/refund` } }],
});

async function startWaiting(tenant: TestTenant, name: string) {
  const id = uniqueId(`${tenant}-wf`);
  const started = await api("POST", "/v1/workflows", { id, definition: waitingDefinition(name), input: { card: SECRET } }, as(tenant));
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${id}`, undefined, as(tenant))).body.steps[0].status).toBe("waiting"));
  return id;
}

/** What the owner sees: the workflow and the length of its history. */
async function ownerView(tenant: TestTenant, id: string) {
  const workflow = await api("GET", `/v1/workflows/${id}`, undefined, as(tenant));
  const history = await api("GET", `/v1/workflows/${id}/history`, undefined, as(tenant));
  return { workflow: workflow.body, events: history.body.events.length as number };
}

/** Cancels as the owner and waits until it ended (its refund sent), so no agent outlives the fake remote. */
async function cancelAndSettle(tenant: TestTenant, id: string) {
  expect((await api("POST", `/v1/workflows/${id}/cancel`, undefined, as(tenant))).status).toBe(202);
  await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${id}`, undefined, as(tenant))).body.status).toBe("cancelled"));
}

async function listIds(tenant: TestTenant, query = ""): Promise<string[]> {
  const page = await api("GET", `/v1/workflows?limit=100${query}`, undefined, as(tenant));
  expect(page.status).toBe(200);
  return page.body.workflows.map((workflow: { id: string }) => workflow.id);
}

let remote: ReturnType<typeof mockRemote>;
beforeAll(() => {
  remote = mockRemote((call) => (new URL(call.url).pathname === "/refund" ? json({ refunded: true }) : json({ accepted: true }, 202)));
});
afterAll(() => vi.restoreAllMocks());

describe("case 20: API auth & tenancy", () => {
  const NO_TOKEN = undefined;
  const credentials: [string, string | undefined][] = [
    ["no Authorization header", NO_TOKEN],
    ["an empty header", ""],
    ["the scheme alone", "Bearer"],
    ["the scheme and a blank", "Bearer    "],
    ["another scheme", `Basic ${btoa(`default:${TOKENS.default}`)}`],
    ["a token without a scheme", TOKENS.default],
    ["a token followed by junk", `Bearer ${TOKENS.default} extra`],
    ["a token with a different case", `Bearer ${TOKENS.default.toUpperCase()}`],
    ["a prefix of a valid token", `Bearer ${TOKENS.default.slice(0, -1)}`],
    ["a valid token with a character appended", `Bearer ${TOKENS.default}x`],
    ["an unknown token", "Bearer not-a-token-of-anyone"],
    ["a tenant:token pair", `Bearer default:${TOKENS.default}`],
  ];

  it.each(credentials)("refuses %s with 401 on every kind of route, shows nothing and changes nothing", async (_name, authorization) => {
    const id = await startWaiting("default", "auth-target");
    const before = await ownerView("default", id);
    const newId = uniqueId("never-started");
    const headers: Record<string, string> = authorization === undefined ? {} : { Authorization: authorization };
    const requests: [string, string, unknown?][] = [
      ["GET", `/v1/workflows/${id}`],
      ["GET", `/v1/workflows/${id}/history`],
      ["GET", "/v1/workflows"],
      ["POST", "/v1/workflows", { id: newId, definition: waitingDefinition("intruder") }],
      ["POST", `/v1/workflows/${id}/cancel`],
    ];
    for (const [method, path, body] of requests) {
      const response = await rawRequest(method, path, {
        headers: body === undefined ? headers : { ...headers, "Content-Type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      expectErrorShape(response, 401, "unauthorized", `${method} ${path}`);
      expect(response.headers.get("WWW-Authenticate")).toMatch(/^Bearer /);
      expect(response.text).not.toContain(id);
      expect(response.text).not.toContain(SECRET);
    }
    expect(await ownerView("default", id)).toEqual(before);
    expect((await api("GET", `/v1/workflows/${newId}`)).status).toBe(404);
    await cancelAndSettle("default", id);
  });

  describe("a workflow of tenant beta, as tenant alpha sees it", () => {
    let betaId: string;
    beforeAll(async () => {
      betaId = await startWaiting("beta", "beta-only-flow");
      // The index follows the object closely: wait until beta's own list shows it, so alpha's lists are meaningful.
      await vi.waitFor(async () => expect(await listIds("beta")).toContain(betaId));
    });

    it("is a 404 with no data to alpha's read and history", async () => {
      for (const path of [`/v1/workflows/${betaId}`, `/v1/workflows/${betaId}/history`]) {
        const response = await rawRequest("GET", path, { headers: bearer("alpha") });
        expectErrorShape(response, 404, "not_found", path);
        expect(response.text).not.toContain(SECRET);
        expect(response.text).not.toContain("beta-only-flow");
      }
      expect((await api("GET", `/v1/workflows/${betaId}`, undefined, as("beta"))).body.input).toEqual({ card: SECRET });
    });

    it("never appears in alpha's list, filtered or not", async () => {
      expect(await listIds("beta", "&name=beta-only-flow")).toEqual([betaId]);
      for (const query of ["", "&name=beta-only-flow", "&status=running"]) {
        const response = await rawRequest("GET", `/v1/workflows?limit=100${query}`, { headers: bearer("alpha") });
        expect(response.status).toBe(200);
        expect(response.text).not.toContain(betaId);
        expect(response.text).not.toContain("beta-only-flow");
      }
    });

    it("is a 404 to alpha's cancel and other operator actions, and stays exactly as beta left it", async () => {
      const before = await ownerView("beta", betaId);
      const actions: [string, unknown?][] = [
        [`/v1/workflows/${betaId}/cancel`],
        [`/v1/workflows/${betaId}/compensate`],
        [`/v1/workflows/${betaId}/steps/charge/retry`],
        [`/v1/workflows/${betaId}/steps/charge/skip`, { output: { by: "alpha" } }],
      ];
      for (const [path, body] of actions) {
        const response = await api("POST", path, body, as("alpha"));
        expect(response.status, path).toBe(404);
        expect(response.body.error.code).toBe("not_found");
        expect(JSON.stringify(response.body)).not.toContain(SECRET);
      }
      const after = await ownerView("beta", betaId);
      expect(after).toEqual(before);
      expect(after.workflow).toMatchObject({ status: "running", steps: [{ status: "waiting" }] });
      // No refund went out: alpha's cancel did not reach beta's workflow.
      expect(remote.callsTo("/refund").filter((call) => call.headers["shepherd-workflow-id"] === betaId)).toEqual([]);
    });

    it("is untouched when alpha starts its own workflow under the same id; each tenant sees only its own", async () => {
      const before = await ownerView("beta", betaId);
      const alphas = await api("POST", "/v1/workflows", { id: betaId, definition: waitingDefinition("alpha-own-flow") }, as("alpha"));
      expect(alphas.status).toBe(201);
      expect(alphas.body).toMatchObject({ id: betaId, name: "alpha-own-flow", input: null });
      expect((await api("GET", `/v1/workflows/${betaId}`, undefined, as("alpha"))).body.name).toBe("alpha-own-flow");
      expect((await ownerView("beta", betaId)).workflow).toEqual(before.workflow);

      await cancelAndSettle("alpha", betaId);
      expect((await ownerView("beta", betaId)).workflow).toEqual(before.workflow);
      await cancelAndSettle("beta", betaId);
    });
  });
});
