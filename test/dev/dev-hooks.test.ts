import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/api/app";
import { withInjectedFaults } from "../../src/dev/fault-bindings";
import { clearInjectedFaults, FAULT_NAMES, faultFires, injectFault } from "../../src/dev/faults";
import { api, bearer, start, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { alarmOf } from "../helpers/scheduler";
import { FAST } from "../helpers/policies";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

/** The environment a deployed Worker gets: wrangler.toml's vars, none of the test-only settings. */
function deployedEnv(extra: Partial<Env> = {}): Env {
  return { ...env, DEV_HOOKS: undefined, FAULTS: undefined, ...(env.TEST_DEPLOYED_VARS as Partial<Env>), ...extra };
}

describe("dev hooks in the deployed configuration", () => {
  it("wrangler.toml does not turn them on", () => {
    expect(env.TEST_DEPLOYED_VARS).not.toHaveProperty("DEV_HOOKS");
    expect(env.TEST_DEPLOYED_VARS).not.toHaveProperty("FAULTS");
  });

  it("refuses every fault, from FAULTS and from injection alike", () => {
    const deployed = deployedEnv({ FAULTS: JSON.stringify(Object.fromEntries(FAULT_NAMES.map((name) => [name, 1]))) });
    for (const name of FAULT_NAMES) {
      injectFault(name);
      expect(faultFires(deployed, name), name).toBe(false);
    }
  });

  it("leaves every binding as it is: the code under test talks to the deployment's own queues, databases and objects", () => {
    const deployed = deployedEnv();
    expect(withInjectedFaults(deployed)).toBe(deployed);
  });

  it.each([
    ["GET", "/dev/workflows/any"],
    ["GET", "/dev/dispatch"],
    ["POST", "/dev/starts"],
  ])("answers 404 on the dev route %s %s, even with a valid token", async (method, path) => {
    const init = { method, headers: { ...bearer(), "Content-Type": "application/json" }, ...(method === "POST" ? { body: "{}" } : {}) };
    const response = await createApp().fetch(new Request(`http://shepherd.test${path}`, init), deployedEnv(), createExecutionContext());
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: "not_found" } });
  });

  it("GET /dev/dispatch needs the API token like every other dev route", async () => {
    expect((await api("GET", "/dev/dispatch", undefined, { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await api("GET", "/dev/dispatch")).body).toMatchObject({ boundMs: 10_000, backPressure: expect.any(Boolean) });
  });
});

describe("dev hooks in local development and tests (DEV_HOOKS=true)", () => {
  it("POST /dev/starts puts the body on the STARTS queue as a producer would, and its start is made", async () => {
    const id = uniqueId("dev-start");
    const response = await api("POST", "/dev/starts", { tenant: "default", start: { id, definition: { name: "dev-start", steps: [{ id: "hold", sleep: { durationMs: 60_000 } }] } } });
    expect(response).toEqual({ status: 202, body: { queued: true } });
    await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(200), { timeout: 10_000, interval: 50 });
    expect((await api("POST", "/dev/starts", "{not json")).status).toBe(400);
  });

  it("fires a fault from FAULTS with its probability", () => {
    const local = { DEV_HOOKS: "true", FAULTS: JSON.stringify({ alarmThrows: 1, enqueueFails: 0 }) };
    expect(faultFires(local, "alarmThrows")).toBe(true);
    expect(faultFires(local, "enqueueFails")).toBe(false);
    expect(faultFires(local, "consumerThrows")).toBe(false);
  });

  it("injects nothing into the work of a tenant in FAULT_FREE_TENANTS", () => {
    const local = { DEV_HOOKS: "true", FAULTS: JSON.stringify({ alarmThrows: 1 }), FAULT_FREE_TENANTS: "neighbour, quiet" };
    expect(faultFires(local, "alarmThrows", "neighbour")).toBe(false);
    expect(faultFires(local, "alarmThrows", "quiet")).toBe(false);
    expect(faultFires(local, "alarmThrows", "chaos")).toBe(true);
    expect(faultFires(local, "alarmThrows")).toBe(true);
  });

  it("wraps the bindings the faults live in, once each, and leaves the others as they are", async () => {
    const local = withInjectedFaults(env);
    expect(local.TASKS).not.toBe(env.TASKS);
    expect(local.TASKS).toBe(local.TASKS);
    expect(local.API_TOKENS).toBe(env.API_TOKENS);
    injectFault("enqueueFails");
    await expect(local.TASKS.sendBatch([{ body: { tenant: "default" } }])).rejects.toThrow("injected fault: enqueueFails");
    injectFault("indexWriteFails");
    const write = local.DB.prepare("INSERT INTO workflows (tenant) VALUES (?)").bind("default");
    await expect(write.run()).rejects.toThrow("injected fault: indexWriteFails");
  });

  it("fires an injected fault only as many times as asked", () => {
    injectFault("enqueueFails", { probability: 1, times: 2 });
    expect([1, 2, 3].map(() => faultFires(env, "enqueueFails"))).toEqual([true, true, false]);
  });

  it("GET /dev/workflows/{id} shows the alarm, the next deadline and the object's storage work", async () => {
    mockRemote(() => json({}, 202));
    const id = uniqueId();
    await start({ name: "inspect", defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });
    await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${id}`)).body.steps[0].status).toBe("waiting"));
    const askedAt = Date.now();
    const response = await api("GET", `/dev/workflows/${id}`);
    expect(response.status).toBe(200);
    // The object's clock at the reading, so a soak judges the alarm's lateness, not the answer's.
    expect(response.body.readAt).toBeGreaterThanOrEqual(askedAt);
    const alarm = await alarmOf(id);
    expect(response.body).toMatchObject({ id, status: "running", alarmAt: alarm, nextDeadlineAt: expect.any(Number), indexPending: false });
    // The alarm is never later than the next deadline (it moves later only when it fires).
    expect(response.body.alarmAt).toBeLessThanOrEqual(response.body.nextDeadlineAt);
    expect(response.body.storage.sqlCalls).toBeGreaterThan(0);
    expect(response.body.storage.rowsWritten).toBeGreaterThan(0);
    expect(response.body.storage.alarmWrites).toBeGreaterThan(0);
    // Asking costs nothing: the counts do not move between two reads.
    expect((await api("GET", `/dev/workflows/${id}`)).body.storage).toEqual(response.body.storage);
  });

  it("keeps another tenant's workflow a 404 and needs a token", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    await start({ name: "inspect", defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });
    await waitForStatus(id, "completed");
    expect((await api("GET", `/dev/workflows/${id}`, undefined, { headers: bearer("beta") })).status).toBe(404);
    expect((await api("GET", `/dev/workflows/${id}`, undefined, { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await api("GET", `/dev/workflows/${id}`)).body).toMatchObject({ status: "completed", alarmAt: null, nextDeadlineAt: null });
  });
});
