import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { snapshot, startAs, uniqueId, type TestTenant } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { cursorRow, mockReceivers, watchWebhookSends } from "../helpers/webhooks";

// A file of its own, so this isolate starts knowing nothing of the tenant's webhooks.
afterEach(() => vi.restoreAllMocks());

const twoSteps = {
  name: "unannounced",
  defaults: FAST,
  steps: [
    { id: "reserve", action: { type: "http", url: `${REMOTE}/reserve` } },
    { id: "charge", dependsOn: ["reserve"], action: { type: "http", url: `${REMOTE}/charge` } },
  ],
};

async function waitForOwnStatus(tenant: TestTenant, id: string, status: string) {
  await vi.waitFor(async () => expect((await snapshot(tenant, id)).status).toBe(status), { timeout: 10_000, interval: 20 });
}

/** Every D1 statement and every SQL statement one workflow's object prepares from now on. */
async function watchStorage(id: string, tenant: TestTenant) {
  const d1: string[] = [];
  const sql: string[] = [];
  await runInDurableObject(schedulerStub(id, tenant), (instance, state) => {
    const db = (instance as unknown as { env: Env }).env.DB;
    // The binding is the isolate's, shared by every object: a watcher set up before hands over to this one
    // (spying on the spy would have it call itself).
    if (vi.isMockFunction(db.prepare)) vi.mocked(db.prepare).mockRestore();
    const prepare = db.prepare.bind(db);
    vi.spyOn(db, "prepare").mockImplementation((query: string) => {
      d1.push(query);
      return prepare(query);
    });
    const exec = state.storage.sql.exec.bind(state.storage.sql);
    vi.spyOn(state.storage.sql, "exec").mockImplementation((query: string, ...bindings: unknown[]) => {
      sql.push(query);
      return exec(query, ...bindings);
    });
  });
  return { d1Reads: () => d1.filter((query) => /\bwebhooks\b/.test(query)), sql: () => sql };
}

describe("a tenant without webhooks", () => {
  it("costs its workflows no webhook message, no cursor row and, once this isolate knows, no D1 read or SQL of their own", async () => {
    mockReceivers();
    const sends = watchWebhookSends();
    // The first workflow finds this isolate not knowing yet: it reads D1 once, and its cursor row goes again.
    const first = uniqueId("beta");
    const cold = await watchStorage(first, "beta");
    await startAs("beta", twoSteps, first);
    await waitForOwnStatus("beta", first, "completed");

    const second = uniqueId("beta");
    const watched = await watchStorage(second, "beta");
    await startAs("beta", twoSteps, second);
    await waitForOwnStatus("beta", second, "completed");

    expect(sends.spy).not.toHaveBeenCalled();
    expect(await cursorRow(first, "beta")).toBeUndefined();
    expect(await cursorRow(second, "beta")).toBeUndefined();
    expect(cold.d1Reads()).toHaveLength(1);
    expect(watched.d1Reads()).toEqual([]);
    expect(watched.sql().filter((statement) => /webhooks/.test(statement))).toEqual([]);
  });
});
