// Reliability case 33: one tenant's burst. Back-pressure refuses only the starts of those filling the task queues
// (the tenant, and within it the workflow name, at or past its fair share of the recent deliveries); everyone
// else is admitted, and a start no client can retry (a schedule's fire) is deferred, never dropped. The soak's
// noisy-neighbour phase measures the same under real load; here the gauge is set and the clock moved.
import { createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { DeliveryCount } from "../../src/domain/admission/fair-share";
import { forgetQueueLagReads, reportQueueLag } from "../../src/admission/queue-lag-monitor";
import { api, bearer, historyOf, uniqueId, type TestTenant } from "../helpers/api";
import { createSchedule, dailySpec, fireOnTime, recentOf, rewriteSchedule, runScheduleAlarm, scheduleAlarm, waitingDefinition } from "../helpers/schedules";

/** BACKPRESSURE_LAG_MS is not set in the tests, so the front door uses its default bound. */
const BOUND_MS = 10_000;
/** wrangler.toml's max_batch_size for the task queues: a full batch says the queue is behind. */
const TASK_BATCH_MAX = 10;

let clock = Date.now();
/**
 * A report time later than any an earlier test left: the gauge's window ends at its newest report, so each test's
 * report starts a window of its own (and, being ahead of the clock, stays fresh while the test runs).
 */
const later = () => (clock = Math.max(clock, Date.now()) + 60_000);

/** The consumers report: the queue is `lagMs` behind, and these were the deliveries. */
async function recordGauge(lagMs: number, deliveries: DeliveryCount[] = []) {
  await env.QUEUE_LAG.getByName("task-queue").record({ queue: "shepherd-tasks", lagMs, at: later(), deliveries });
  forgetQueueLagReads();
}

/** A burst from tenant `default`'s "noisy" workflows: 15 s past the bound, every recent delivery theirs. */
const noisyBurst = () => recordGauge(BOUND_MS + 15_000, [{ tenant: "default", name: "noisy", count: 500 }]);

const oneWait = (name: string) => ({ name, steps: [{ id: "hold", waitForEvent: { event: "done", timeoutMs: 60_000 } }] });

function startAs(tenant: TestTenant, name: string) {
  return api("POST", "/v1/workflows", { id: uniqueId(tenant), definition: oneWait(name) }, { headers: bearer(tenant) });
}

afterEach(() => recordGauge(0));

describe("case 33: one tenant's burst", () => {
  it("refuses the tenant filling the queue past the bound (503 + Retry-After, nothing stored) and admits another tenant's start", async () => {
    await noisyBurst();

    const id = uniqueId("noisy");
    const refused = await api("POST", "/v1/workflows", { id, definition: oneWait("noisy") });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: { code: "overloaded", message: expect.stringContaining('tenant "default"') } });
    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);

    const other = await startAs("beta", "noisy");
    expect(other.status, JSON.stringify(other.body)).toBe(201);
  });

  it("admits the noisy tenant's other workflow names: its nightly job does not pay for its own batch", async () => {
    await noisyBurst();
    expect((await startAs("default", "nightly")).status).toBe(201);
    expect((await startAs("default", "noisy")).status).toBe(503);
  });

  it("slows every tenant at its fair share: two equally noisy tenants are both refused, a third is admitted", async () => {
    await recordGauge(BOUND_MS + 5_000, [
      { tenant: "alpha", name: "batch", count: 300 },
      { tenant: "beta", name: "batch", count: 300 },
      { tenant: "gamma", name: "batch", count: 3 },
    ]);
    expect((await startAs("alpha", "batch")).status).toBe(503);
    expect((await startAs("beta", "batch")).status).toBe(503);
    expect((await startAs("gamma", "batch")).status).toBe(201);
  });

  it("learns whose backlog it is from the deliveries the consumer counts: the tenant and workflow name each task message carries", async () => {
    // Two full batches that waited 30 s: tenant alpha's "flood", and one message of beta's among them. The second
    // comes within the consumer's report interval, so its count rides with the next report.
    const now = later();
    const batch = (round: number, tenantOf: (i: number) => string) =>
      createMessageBatch(
        "shepherd-tasks",
        Array.from({ length: TASK_BATCH_MAX }, (_, i) => ({ id: `flood-${round}-${i}`, timestamp: new Date(now - BOUND_MS - 20_000 + i), attempts: 1, body: { tenant: tenantOf(i), name: "flood" } })),
      );
    await reportQueueLag(env, batch(0, () => "alpha"), now);
    await reportQueueLag(env, batch(1, (i) => (i === 0 ? "beta" : "alpha")), now + 10);
    await reportQueueLag(env, batch(2, () => "alpha"), now + 1_500);
    forgetQueueLagReads();

    const gauge = (await api("GET", "/dev/dispatch")).body;
    expect(gauge).toMatchObject({ backPressure: true });
    expect(gauge.deliveries).toEqual([
      { tenant: "alpha", name: "flood", count: 29 },
      { tenant: "beta", name: "flood", count: 1 },
    ]);
    expect((await startAs("alpha", "flood")).status).toBe(503);
    expect((await startAs("beta", "flood")).status).toBe(201);
  });
});

describe("case 33: a schedule's fire under back-pressure", () => {
  /** A daily schedule of tenant default whose workflows are named "noisy", the name filling the queue. */
  async function noisySchedule(extra: Record<string, unknown> = {}) {
    const { spec } = dailySpec(uniqueId("sched"), { workflow: { definition: waitingDefinition("noisy") }, ...extra });
    expect((await createSchedule(spec)).status).toBe(201);
    return spec.id;
  }

  it("is deferred and recorded as delayed, then started exactly once when admitted", async () => {
    const id = await noisySchedule();
    await noisyBurst();

    const at = await fireOnTime(id);
    const workflowId = `${id}:${at}`;
    expect(await recentOf(id)).toEqual([{ at, workflowId, outcome: "delayed", delays: 1, error: expect.stringContaining("overloaded") }]);
    expect((await api("GET", `/v1/workflows/${workflowId}`)).status).toBe(404);
    // The alarm comes back when the front door said to (Retry-After: 15 s), not at the next day's fire.
    const retryAt = (await scheduleAlarm(id))!;
    expect(retryAt - Date.now()).toBeGreaterThan(10_000);
    expect(retryAt - Date.now()).toBeLessThanOrEqual(15_000);

    // The queue catches up; the clock reaches the retry.
    await recordGauge(0);
    await rewriteSchedule(id, (state) => ({ ...state, deferredUntil: Date.now() - 1 }));
    expect(await runScheduleAlarm(id)).toBe(true);
    expect(await runScheduleAlarm(id)).toBe(true);

    expect(await recentOf(id)).toEqual([{ at, workflowId, outcome: "started", delays: 1 }]);
    expect((await historyOf(workflowId)).filter((event) => event.type === "workflow_started")).toHaveLength(1);
  });

  it("is started at the end of its catch-up window even while still refused: deferred, never dropped", async () => {
    const id = await noisySchedule();
    await noisyBurst();
    const at = await fireOnTime(id);
    expect((await recentOf(id))[0]).toMatchObject({ outcome: "delayed" });

    // The back-pressure holds, and the clock passes the fire's window (no catch-up window: the on-time slack).
    await noisyBurst();
    await rewriteSchedule(id, (state) => ({ ...state, pendingStarts: [at - 61_000], recent: [{ ...state.recent[0]!, at: at - 61_000 }], deferredUntil: Date.now() - 1 }));
    expect(await runScheduleAlarm(id)).toBe(true);

    const workflowId = `${id}:${at - 61_000}`;
    expect(await recentOf(id)).toEqual([{ at: at - 61_000, workflowId, outcome: "started", delays: 1 }]);
    expect((await api("GET", `/v1/workflows/${workflowId}`)).body).toMatchObject({ status: "running", name: "noisy" });
  });
});
