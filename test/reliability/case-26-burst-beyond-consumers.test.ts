import { createExecutionContext, createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { QUEUE_LAG_FRESH_MS } from "../../src/domain/admission/back-pressure";
import { QUEUE_CHECK_JITTER, QUEUE_CHECK_MS } from "../../src/domain/machine/queue-check";
import { forgetQueueLagReads } from "../../src/admission/queue-lag-monitor";
import { api, getWorkflow, historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { watchDeliveries, watchSends } from "../helpers/queue";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { backdate, fireAlarm } from "../helpers/time";

afterEach(async () => {
  clearInjectedFaults();
  vi.restoreAllMocks();
  await recordQueueLag(0);
});

/** The old default schedule-to-start, which a burst used to exceed: waiting longer than this must be harmless. */
const OLD_DEFAULT_SCHEDULE_TO_START_MS = 60_000;
/** BACKPRESSURE_LAG_MS is not set in the tests, so the front door uses its default bound. */
const BOUND_MS = 10_000;

/** No schedule-to-start: the contract's default now. */
const DEFAULTS = { retry: FAST.retry, timeouts: { startToCloseMs: 5_000, heartbeatMs: 2_000 } };
const oneStep = (timeouts: Record<string, number> = {}) => ({
  name: "burst",
  defaults: { ...DEFAULTS, timeouts: { ...DEFAULTS.timeouts, ...timeouts } },
  steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }],
});

/** Lets `ms` pass while the queued attempt's message waits; returns when the attempt was scheduled, moved back. */
async function backdateQueuedAttempt(id: string, ms: number): Promise<number> {
  await backdate(id, { ms });
  return (await getWorkflow(id)).steps[0].attempts[0].scheduledAt;
}

/** Runs the supervisor now, as its alarm would once due. */
const supervise = async (id: string) => expect(await fireAlarm(id)).toBe(true);

async function recordQueueLag(lagMs: number, at = Date.now()) {
  // Whose the backlog is: this file's own "burst" workflows, far more than any delivery an earlier test left.
  const deliveries = [{ tenant: "default", name: "burst", count: 1_000_000 }];
  await env.QUEUE_LAG.getByName("task-queue").record({ queue: "shepherd-tasks", lagMs, at, deliveries });
  forgetQueueLagReads();
}

describe("case 26: burst beyond the consumers (in the pool: one attempt, moved time)", () => {
  it("leaves an attempt whose message waits in our queue past the old deadline alone: not timed out, not sent again, no attempt used; delivered late, it runs once", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const sends = watchSends((message) => message.workflowId === id);
    await start(oneStep(), { id });
    const waitedMs = 10 * OLD_DEFAULT_SCHEDULE_TO_START_MS;
    const scheduledAt = await backdateQueuedAttempt(id, waitedMs);
    // The queue is delivering messages as old as this one: it is slow, not lossy.
    await recordQueueLag(waitedMs);

    await supervise(id);
    await schedulerStub(id).wake();
    expect((await historyOf(id)).map((event) => event.type)).toEqual(["workflow_started", "step_scheduled"]);
    const waiting = (await api("GET", `/v1/workflows/${id}`)).body;
    expect(waiting.steps[0]).toMatchObject({ status: "scheduled", attempt: 1, attempts: [{ n: 1, status: "scheduled", scheduledAt }] });
    expect(sends.of(id).map((entry) => entry.message.attempt)).toEqual([1]);
    // An operator sees how long it has waited for an agent; the supervisor looks again in about a minute.
    const inspected = (await api("GET", `/dev/workflows/${id}`)).body;
    expect(inspected).toMatchObject({ unclaimedSince: scheduledAt, unsentTasks: 0 });
    expect(inspected.nextDeadlineAt - Date.now()).toBeGreaterThan(QUEUE_CHECK_MS * (1 - QUEUE_CHECK_JITTER) - 5_000);

    // The queue finally delivers the message: the attempt is claimed and runs, once.
    await sends.release();
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { n: number; status: string }) => [attempt.n, attempt.status])).toEqual([[1, "succeeded"]]);
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
  });

  it("finds a message the queue lost (younger ones are being delivered) and sends the same attempt again: it runs once, no attempt used", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    // The first message is lost, as a local queue loses what it held across a restart.
    const sends = watchSends((message) => message.workflowId === id && sends.of(id).length === 0);
    await start(oneStep(), { id });
    await backdateQueuedAttempt(id, 2 * QUEUE_CHECK_MS);
    await recordQueueLag(3_000);

    await supervise(id);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { n: number; status: string }) => [attempt.n, attempt.status])).toEqual([[1, "succeeded"]]);
    expect(sends.of(id).map((entry) => [entry.message.attempt, entry.held])).toEqual([
      [1, true],
      [1, false],
    ]);
    const resent = (await historyOf(id)).find((event) => event.type === "task_resent");
    expect(resent).toMatchObject({ stepId: "only", attempt: 1, data: { reason: "younger messages were delivered", queueLagMs: 3_000 } });
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
  });

  it("still times out a queued attempt whose step sets scheduleToStartMs, and the retry policy applies; the late message runs nothing", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const deliveries = watchDeliveries();
    const sends = watchSends((message) => message.workflowId === id && message.attempt === 1);
    await start(oneStep({ scheduleToStartMs: 1_000 }), { id });
    await backdateQueuedAttempt(id, 2_000);

    await supervise(id);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { status: string; error?: { timeout?: string } }) => [attempt.status, attempt.error?.timeout])).toEqual([
      ["timed_out", "schedule_to_start"],
      ["succeeded", undefined],
    ]);
    await sends.release();
    await vi.waitFor(() => expect(deliveries.of(id).map((delivery) => [delivery.body.attempt, delivery.answer])).toEqual([[2, "ack"], [1, "ack"]]));
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
  });

  it("has the queue deliver again a message whose consumer died before handing it to an agent: claimed once, run once, no attempt used", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const deliveries = watchDeliveries();
    injectFault("consumerThrows", { probability: 1, times: 1 });
    const id = uniqueId();
    await start(oneStep(), { id });

    const workflow = await waitForStatus(id, "completed");
    expect(timesFired("consumerThrows")).toBe(1);
    expect(workflow.steps[0].attempts.map((attempt: { n: number; status: string }) => [attempt.n, attempt.status])).toEqual([[1, "succeeded"]]);
    expect(deliveries.of(id).map((delivery) => [delivery.attempts, delivery.answer ?? "none"])).toEqual([
      [1, "none"],
      [2, "ack"],
    ]);
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
  });

  it("measures the queue's lag from a full batch its consumer is delivered: the age of the oldest first delivery", async () => {
    const sentAt = Date.now() - 42_000;
    await deliverBatch([
      { id: "old", timestamp: new Date(sentAt), attempts: 1, body: { not: "a task" } },
      // A redelivery's age includes our own retry delays, not the queue's backlog.
      { id: "retried", timestamp: new Date(sentAt - 300_000), attempts: 3, body: { not: "a task either" } },
      ...Array.from({ length: TASK_BATCH_MAX - 2 }, (_, i) => ({ id: `young-${i}`, timestamp: new Date(), attempts: 1, body: { not: i } })),
    ]);

    const gauge = (await api("GET", "/dev/dispatch")).body;
    expect(gauge.lagMs).toBeGreaterThanOrEqual(42_000);
    expect(gauge.lagMs).toBeLessThan(60_000);
    expect(gauge).toMatchObject({ boundMs: BOUND_MS, backPressure: true });
  });

  it("takes a batch with room left as the queue having caught up: lag 0, however long its messages waited", async () => {
    await recordQueueLag(BOUND_MS * 3);
    await deliverBatch([{ id: "last", timestamp: new Date(Date.now() - 42_000), attempts: 1, body: { not: "a task" } }]);

    expect((await api("GET", "/dev/dispatch")).body).toMatchObject({ lagMs: 0, backPressure: false });
  });
});

/** wrangler.toml's max_batch_size for shepherd-tasks. */
const TASK_BATCH_MAX = 10;

/** Hands the consumer one batch, as the queue would; malformed bodies are acknowledged and dropped. */
async function deliverBatch(messages: { id: string; timestamp: Date; attempts: number; body: unknown }[]) {
  forgetQueueLagReads();
  await worker.queue(createMessageBatch("shepherd-tasks", messages), env, createExecutionContext());
  forgetQueueLagReads();
}

describe("back-pressure at the front door", () => {
  it("refuses a new start with 503 overloaded and Retry-After while the queue is further behind than the bound, and stores nothing", async () => {
    await recordQueueLag(BOUND_MS + 15_000);
    const id = uniqueId();
    const response = await exports_fetch("POST", "/v1/workflows", { id, definition: oneStep() });
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("15");
    expect(await response.json()).toMatchObject({ error: { code: "overloaded", message: expect.stringMatching(/queue is 25\.0 s behind.*retry after 15 seconds/) } });
    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
    expect((await api("GET", "/dev/dispatch")).body).toMatchObject({ lagMs: BOUND_MS + 15_000, backPressure: true });
  });

  it("still answers bad input with its 4xx, and reads and operator actions as usual, while it refuses starts", async () => {
    mockRemote(() => json({ ok: true }));
    const { id } = await start(oneStep());
    await waitForStatus(id, "completed");
    await recordQueueLag(BOUND_MS * 3);
    expect((await api("POST", "/v1/workflows", { definition: { name: "x", steps: [] } })).status).toBe(400);
    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(200);
    expect((await api("GET", "/v1/workflows")).status).toBe(200);
    // An operator action is answered on its merits (a completed workflow cannot be compensated), not refused.
    expect((await api("POST", `/v1/workflows/${id}/compensate`)).status).toBe(409);
  });

  it("accepts starts again once the lag is within the bound, or the last measurement is stale (no deliveries: the queue is empty)", async () => {
    mockRemote(() => json({ ok: true }));
    await recordQueueLag(BOUND_MS);
    const first = await start(oneStep());
    await recordQueueLag(BOUND_MS * 5, Date.now() - QUEUE_LAG_FRESH_MS - 1);
    const second = await start(oneStep());
    expect((await api("GET", "/dev/dispatch")).body).toMatchObject({ backPressure: false });
    await waitForStatus(first.id, "completed");
    await waitForStatus(second.id, "completed");
  });
});

/** The Worker's fetch, keeping the response's headers. */
async function exports_fetch(method: string, path: string, body: unknown): Promise<Response> {
  const { exports } = await import("cloudflare:workers");
  return exports.default.fetch(`http://shepherd.test${path}`, {
    method,
    headers: { Authorization: "Bearer test-token-default", "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}
