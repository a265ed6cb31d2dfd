import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_TENANT_STARTS_IN_FLIGHT, tenantStartsInFlight } from "../../src/config";
import { StartsInFlight } from "../../src/admission/starts-in-flight";
import { appWithEnv } from "../helpers/app-with-env";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";

afterEach(() => vi.restoreAllMocks());

// The Worker with one start in progress allowed per tenant and workflow name (the tests' own configuration lifts the cap).
const cappedEnv: Env = { ...env, TENANT_STARTS_IN_FLIGHT: "1" };
const { send, settle } = appWithEnv(cappedEnv);

const startBody = (id: string, name = "capped") => ({ id, definition: { name, defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] } });

describe("a tenant and workflow name's starts in progress at once", () => {
  it("past the cap, answers 429 rate_limited with Retry-After 1 and stores nothing; another tenant's and another name's starts go in", async () => {
    mockRemote(() => json({ ok: true }));
    const ids = [0, 1, 2, 3, 4].map((i) => `capped-${crypto.randomUUID()}-${i}`);
    const otherTenant = `capped-${crypto.randomUUID()}`;
    const otherName = `nightly-${crypto.randomUUID()}`;
    const [answers, otherTenantAnswer, otherNameAnswer] = await Promise.all([
      Promise.all(ids.map((id) => send("POST", "/v1/workflows", "alpha", startBody(id)))),
      send("POST", "/v1/workflows", "beta", startBody(otherTenant)),
      send("POST", "/v1/workflows", "alpha", startBody(otherName, "nightly")),
    ]);

    const accepted = ids.filter((_, k) => answers[k]!.status === 201);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const answer of refused) {
      expect(answer).toMatchObject({ status: 429, retryAfter: "1", body: { error: { code: "rate_limited" } } });
      expect(answer.body.error.message).toBe('1 starts of "capped" are already in progress for this tenant; nothing was started: retry after 1 second.');
    }
    for (const [k, id] of ids.entries()) if (answers[k]!.status === 429) expect((await send("GET", `/v1/workflows/${id}`, "alpha")).status).toBe(404);
    expect([otherTenantAnswer.status, otherNameAnswer.status]).toEqual([201, 201]);
    await settle("alpha", [...accepted, otherName]);
    await settle("beta", [otherTenant]);
  });

  it("lets the next start in once one ends, however it ended", async () => {
    mockRemote(() => json({ ok: true }));
    const [first, second] = [0, 1].map((i) => `capped-${crypto.randomUUID()}-${i}`);
    // Refused inside the start: no published "capped" (404), and another body under a taken id (409).
    expect((await send("POST", "/v1/workflows", "alpha", { id: first, definitionRef: { name: "capped" } })).status).toBe(404);
    expect((await send("POST", "/v1/workflows", "alpha", startBody(first!))).status).toBe(201);
    expect((await send("POST", "/v1/workflows", "alpha", { ...startBody(first!), input: { other: true } })).status).toBe(409);
    expect((await send("POST", "/v1/workflows", "alpha", startBody(first!))).status).toBe(200);
    expect((await send("POST", "/v1/workflows", "alpha", startBody(second!))).status).toBe(201);
    await settle("alpha", [first!, second!]);
  });

  it("holds each item of a batch to the cap as a start of its own", async () => {
    mockRemote(() => json({ ok: true }));
    const [first, second, other] = [0, 1, 2].map((i) => `capped-${crypto.randomUUID()}-${i}`);
    const answer = await send("POST", "/v1/workflows/batch", "alpha", { workflows: [startBody(first!), startBody(second!), startBody(other!, "nightly")] });
    expect(answer.status).toBe(200);
    expect(answer.body.results.map((item: { status: number }) => item.status)).toEqual([201, 429, 201]);
    expect(answer.body.results[1].error.code).toBe("rate_limited");
    expect((await send("GET", `/v1/workflows/${second}`, "alpha")).status).toBe(404);
    await settle("alpha", [first!, other!]);
  });

  it("counts per tenant and name, frees a slot whatever the start's end, and is 8 unless configured (0: no cap)", () => {
    const starts = new StartsInFlight();
    const a = { tenant: "t", name: "a" };
    const b = { tenant: "t", name: "b" };
    const otherA = { tenant: "u", name: "a" };
    expect([starts.tryEnter(a, 2), starts.tryEnter(a, 2), starts.tryEnter(a, 2), starts.tryEnter(b, 2), starts.tryEnter(otherA, 2)]).toEqual([true, true, false, true, true]);
    starts.leave(a);
    expect(starts.tryEnter(a, 2)).toBe(true);
    for (const key of [a, a, b, otherA]) starts.leave(key);
    expect([a, b, otherA].map((key) => starts.inProgress(key))).toEqual([0, 0, 0]);

    const settings: [string | undefined, number][] = [[undefined, DEFAULT_TENANT_STARTS_IN_FLIGHT], ["3", 3], ["0", 0], ["-1", 8], ["x", 8], ["2.5", 8], ["", 8], [" ", 8]];
    for (const [raw, cap] of settings) expect(tenantStartsInFlight({ TENANT_STARTS_IN_FLIGHT: raw } as Env)).toBe(cap);
    expect(DEFAULT_TENANT_STARTS_IN_FLIGHT).toBe(8);
  });
});
