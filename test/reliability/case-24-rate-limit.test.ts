import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { appWithEnv } from "../helpers/app-with-env";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";

afterEach(() => vi.restoreAllMocks());

// The Worker with Miniflare's rate limiter set to 5 writes per 10 s per tenant: the real binding, a tight limit.
const limitedEnv: Env = { ...env, TENANT_WRITE_LIMIT: env.TEST_STRICT_WRITE_LIMIT };
const { send, settle } = appWithEnv(limitedEnv);

/** The binding's period: Miniflare counts in windows aligned to the wall clock (epoch / period). */
const PERIOD_MS = 10_000;

/**
 * The test's writes must all fall in one window, or the count starts over halfway: with less than 3 s left in
 * the current one, wait for the next. This is about the limiter's real clock, so it waits in real time.
 */
async function freshWindow(): Promise<void> {
  const left = PERIOD_MS - (Date.now() % PERIOD_MS);
  if (left < 3_000) await new Promise((resolve) => setTimeout(resolve, left + 20));
}

const startBody = (id: string) => ({ id, definition: { name: "limited", defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] } });

describe("case 24: rate limit", () => {
  it("answers 429 rate_limited with Retry-After once a tenant exceeds its writes, and stores nothing for the refused start", async () => {
    mockRemote(() => json({ ok: true }));
    await freshWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await send("POST", "/v1/workflows", "alpha", startBody(`limited-${i}`))).status);
    expect(statuses.slice(0, 5)).toEqual([201, 201, 201, 201, 201]);
    expect(statuses.slice(5)).toEqual([429, 429]);

    const refused = await send("POST", "/v1/workflows", "alpha", startBody("limited-refused"));
    expect(refused).toMatchObject({ status: 429, retryAfter: "10", body: { error: { code: "rate_limited" } } });
    expect((await send("GET", "/v1/workflows/limited-refused", "alpha")).status).toBe(404);
    await settle("alpha", [0, 1, 2, 3, 4].map((i) => `limited-${i}`));
  });

  it("leaves another tenant unaffected, and reads unlimited", async () => {
    mockRemote(() => json({ ok: true }));
    await freshWindow();
    for (let i = 0; i < 6; i++) await send("POST", "/v1/workflows", "default", startBody(`other-${i}`));
    expect((await send("POST", "/v1/workflows", "default", startBody("other-x"))).status).toBe(429);
    expect((await send("POST", "/v1/workflows", "beta", startBody("beta-1"))).status).toBe(201);
    for (let i = 0; i < 10; i++) expect((await send("GET", "/v1/workflows/other-0", "default")).status).toBe(200);
    await settle("default", [0, 1, 2, 3, 4].map((i) => `other-${i}`));
    await settle("beta", ["beta-1"]);
  });
});
