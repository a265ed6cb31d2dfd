// Circuit breakers as the tests reach them: a target host of each test's own, a remote behind it whose health the
// test sets, the breaker's object and its stored state, and what the API and the workflows show of it. The end of an
// open period is not waited for: the breaker's stored `openUntil` is moved into the past and its alarm is run.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import type { BreakerState } from "../../src/domain/breaker/machine";
import { breakerName } from "../../src/breakers/breaker-rpc";
import { api, bearer, uniqueId, type TestTenant } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { json, mockRemote } from "../helpers/remote";

/** A host no other test calls, so its breaker starts closed (and this isolate knows nothing of it). */
export function uniqueHost(): string {
  return `${uniqueId("down")}.example`;
}

/**
 * A remote that answers 503 while `down` (every host of the test), 200 otherwise; `answers` overrides it per
 * workflow (by its Shepherd-Workflow-Id header).
 */
export function remoteWithHealth() {
  const health = { down: true, answers: new Map<string, () => Response>() };
  const remote = mockRemote((call) => {
    const override = health.answers.get(call.headers["shepherd-workflow-id"] ?? "");
    if (override) return override();
    return health.down ? json({ error: "unavailable" }, 503) : json({ ok: true });
  });
  return { health, remote, callsTo: (host: string) => remote.calls.filter((call) => new URL(call.url).host === host).length };
}

/** One step calling `host`, retried quickly: `maxAttempts` attempts 20 ms apart. */
export function callingHost(host: string, { maxAttempts = 3, name = "calls-host", steps = 1 } = {}) {
  return {
    name,
    onFailure: "fail",
    // The contract's default breaker settings (FAST raises the threshold for tests that are not about breakers).
    defaults: { timeouts: FAST.timeouts, retry: { maxAttempts, initialIntervalMs: 20, backoffCoefficient: 1, maxIntervalMs: 20, jitter: 0 } },
    steps: Array.from({ length: steps }, (_, i) => ({ id: `call-${i + 1}`, action: { type: "http", url: `https://${host}/call-${i + 1}`, body: { n: i + 1 } } })),
  };
}

export async function startAs(tenant: TestTenant, definition: unknown, id = uniqueId(tenant)): Promise<string> {
  const response = await api("POST", "/v1/workflows", { id, definition }, { headers: bearer(tenant) });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return id;
}

export async function workflowOf(tenant: TestTenant, id: string) {
  const response = await api("GET", `/v1/workflows/${id}`, undefined, { headers: bearer(tenant) });
  expect(response.status).toBe(200);
  return response.body;
}

export async function historyOf(tenant: TestTenant, id: string): Promise<{ at: number; type: string; stepId?: string; attempt?: number; data?: any }[]> {
  const response = await api("GET", `/v1/workflows/${id}/history`, undefined, { headers: bearer(tenant) });
  expect(response.status).toBe(200);
  return response.body.events;
}

export const eventsOf = async (tenant: TestTenant, id: string, type: string) => (await historyOf(tenant, id)).filter((event) => event.type === type);

/** Waits until the workflow's history holds `count` events of `type`. */
export async function waitForEvents(tenant: TestTenant, id: string, type: string, count = 1) {
  return vi.waitFor(
    async () => {
      const events = await eventsOf(tenant, id, type);
      expect(events.length, `${type} in ${id}`).toBeGreaterThanOrEqual(count);
      return events;
    },
    { timeout: 10_000, interval: 20 },
  );
}

export async function waitForWorkflow(tenant: TestTenant, id: string, status: string) {
  return vi.waitFor(
    async () => {
      const workflow = await workflowOf(tenant, id);
      expect(workflow.status, id).toBe(status);
      return workflow;
    },
    { timeout: 10_000, interval: 20 },
  );
}

export async function targetsOf(tenant: TestTenant): Promise<{ host: string; state: string; failures: number; openUntil?: number; parked: number }[]> {
  const response = await api("GET", "/v1/targets", undefined, { headers: bearer(tenant) });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.targets;
}

/** Waits until GET /v1/targets shows the host's breaker matching `expected`. */
export async function waitForTarget(tenant: TestTenant, host: string, expected: Record<string, unknown>) {
  return vi.waitFor(
    async () => {
      const target = (await targetsOf(tenant)).find((row) => row.host === host);
      expect(target).toMatchObject({ host, ...expected });
      return target!;
    },
    { timeout: 10_000, interval: 20 },
  );
}

export function breakerStub(tenant: string, host: string) {
  return env.BREAKERS.getByName(breakerName(tenant, host));
}

/** What the breaker's object has stored: its state and the steps parked on it. */
export function storedBreaker(tenant: string, host: string): Promise<{ breaker: BreakerState; parked: { workflow_id: string; step_id: string }[] }> {
  return runInDurableObject(breakerStub(tenant, host), (_instance, state) => {
    const sql = state.storage.sql;
    const row = sql.exec<{ state_json: string }>("SELECT state_json FROM breaker").one();
    return { breaker: JSON.parse(row.state_json) as BreakerState, parked: sql.exec<{ workflow_id: string; step_id: string }>("SELECT workflow_id, step_id FROM parked ORDER BY since").toArray() };
  });
}

/**
 * The open period ends: the breaker's stored `openUntil` moves a moment into the past, as if that long had passed,
 * and its alarm runs as the runtime would run it then.
 */
export async function endOpenPeriod(tenant: string, host: string): Promise<void> {
  const stub = breakerStub(tenant, host);
  await runInDurableObject(stub, (_instance, state) => {
    const sql = state.storage.sql;
    const breaker = JSON.parse(sql.exec<{ state_json: string }>("SELECT state_json FROM breaker").one().state_json) as BreakerState;
    expect(breaker.state).toBe("open");
    sql.exec("UPDATE breaker SET state_json = ?", JSON.stringify({ ...breaker, openUntil: Date.now() - 1 }));
  });
  await evictDurableObject(stub);
  expect(await runDurableObjectAlarm(stub)).toBe(true);
}
