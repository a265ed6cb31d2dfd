// Worker pools through the real objects (contract v1.2, "The user's own agents: worker pools"; cases 29 and 31):
// a pool's long poll, exactly one poll per attempt, a worker that dies, priority, fallback and tenancy.
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, bearer, getWorkflow, historyOf, uniqueId, waitForStatus, type TestTenant } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { backdate, fireAlarm } from "../helpers/time";

const workerStep = (id: string, pool: string, fields: Record<string, unknown> = {}) => ({ id, action: { type: "worker", pool, input: { file: "{{ input.file }}" }, ...fields } });

function definition(pool: string, fields: Record<string, unknown> = {}, stepFields: Record<string, unknown> = {}) {
  return { name: "pooled", defaults: { timeouts: { heartbeatMs: 10_000, startToCloseMs: 60_000 } }, steps: [{ ...workerStep("resize", pool, fields), ...stepFields }] };
}

async function startPooled(pool: string, options: { tenant?: TestTenant; input?: unknown; fields?: Record<string, unknown>; priority?: number; fairnessKey?: string; stepFields?: Record<string, unknown> } = {}) {
  const id = uniqueId("pooled");
  const body = { id, definition: definition(pool, options.fields, options.stepFields), input: options.input ?? { file: "a.png" }, ...(options.priority ? { priority: options.priority } : {}), ...(options.fairnessKey ? { fairnessKey: options.fairnessKey } : {}) };
  const started = await api("POST", "/v1/workflows", body, { headers: bearer(options.tenant ?? "default") });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return id;
}

function poll(pool: string, body: Record<string, unknown> = {}, tenant: TestTenant = "default") {
  return api("POST", `/v1/pools/${pool}/tasks/poll`, { workerId: "w-1", waitMs: 0, ...body }, { headers: bearer(tenant) });
}

const uniquePool = () => uniqueId("pool").replace(/-/g, "_");

describe("a worker pool", () => {
  it("hands a task to a waiting poll as soon as its workflow starts, and the worker's report ends the step", async () => {
    const pool = uniquePool();
    const waiting = poll(pool, { waitMs: 10_000 });
    const id = await startPooled(pool, { input: { file: "cat.png" } });
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.tasks).toHaveLength(1);
    const [task] = answer.body.tasks;
    expect(task).toMatchObject({ workflowId: id, stepId: "resize", attempt: 1, kind: "action", input: { file: "cat.png" }, heartbeatMs: 10_000, startToCloseMs: 60_000, idempotencyKey: `${id}:resize` });
    expect((await api("POST", `/v1/tasks/${task.token}/heartbeat`, { progress: { pct: 50 } })).body).toEqual({ cancelRequested: false });
    expect((await api("POST", `/v1/tasks/${task.token}/complete`, { output: { thumb: "cat-small.png" } })).status).toBe(200);
    const done = await waitForStatus(id, "completed");
    expect(done.steps[0]).toMatchObject({ id: "resize", pool });
    expect(done.output).toEqual({ resize: { thumb: "cat-small.png" } });
  });

  it("hands each attempt to exactly one of two racing polls", async () => {
    const pool = uniquePool();
    await startPooled(pool);
    const [first, second] = await Promise.all([poll(pool, { waitMs: 300 }), poll(pool, { waitMs: 300, workerId: "w-2" })]);
    expect([first.body.tasks.length, second.body.tasks.length].sort()).toEqual([0, 1]);
  });

  it("gives up to `max` tasks to one poll, the best priority first, and the oldest first within one", async () => {
    const pool = uniquePool();
    const low = await startPooled(pool, { priority: 5 });
    const older = await startPooled(pool);
    const urgent = await startPooled(pool, { stepFields: { priority: 1 } });
    const newer = await startPooled(pool);
    const answer = await poll(pool, { max: 10 });
    expect(answer.body.tasks.map((task: { workflowId: string }) => task.workflowId)).toEqual([urgent, older, newer, low]);
  });

  it("lets fairness keys take turns within a priority", async () => {
    const pool = uniquePool();
    const busy = [await startPooled(pool, { fairnessKey: "big" }), await startPooled(pool, { fairnessKey: "big" }), await startPooled(pool, { fairnessKey: "big" })];
    const quiet = await startPooled(pool, { fairnessKey: "small" });
    const order = (await poll(pool, { max: 4 })).body.tasks.map((task: { workflowId: string }) => task.workflowId);
    expect(order).toEqual([busy[0], quiet, busy[1], busy[2]]);
  });

  it("never shows a task to another tenant's worker", async () => {
    const pool = uniquePool();
    await startPooled(pool, { tenant: "alpha" });
    expect((await poll(pool, {}, "beta")).body.tasks).toEqual([]);
    expect((await poll(pool, {}, "alpha")).body.tasks).toHaveLength(1);
  });

  it("lists its pending and running tasks and the workers seen", async () => {
    const pool = uniquePool();
    await startPooled(pool, { tenant: "gamma" });
    await startPooled(pool, { tenant: "gamma" });
    await poll(pool, { workerId: "gpu-box-1" }, "gamma");
    const listed = await api("GET", "/v1/pools", undefined, { headers: bearer("gamma") });
    expect(listed.status).toBe(200);
    const entry = listed.body.pools.find((p: { name: string }) => p.name === pool);
    expect(entry).toMatchObject({ name: pool, pending: 1, running: 1, workers: [{ id: "gpu-box-1" }] });
    expect(entry.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
    const metrics = await api("GET", "/v1/metrics", undefined, { headers: bearer("gamma") });
    expect(metrics.body.pools).toContainEqual({ name: pool, pending: 1, oldestPendingAgeMs: expect.any(Number) });
    const text = await exports.default.fetch("http://shepherd.test/v1/metrics", { headers: { ...bearer("gamma"), Accept: "text/plain" } });
    expect(await text.text()).toContain(`shepherd_pool_pending{pool="${pool}"} 1`);
  });

  it("hands nothing to a poll whose worker went away, so the next worker's poll gets the task", async () => {
    const pool = uniquePool();
    const gone = new AbortController();
    const abandoned = exports.default
      .fetch(`http://shepherd.test/v1/pools/${pool}/tasks/poll`, {
        method: "POST",
        headers: { ...bearer(), "Content-Type": "application/json" },
        body: JSON.stringify({ workerId: "gone", waitMs: 10_000 }),
        signal: gone.signal,
      })
      .catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    gone.abort();
    await abandoned;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const id = await startPooled(pool);
    const [task] = (await poll(pool, { workerId: "next", waitMs: 2_000 })).body.tasks;
    expect(task).toMatchObject({ workflowId: id, attempt: 1 });
  });

  it("fails the step for good at once when its worker reports a failure with retryable: false, and says the report decided", async () => {
    const pool = uniquePool();
    const id = await startPooled(pool, { stepFields: { retry: { maxAttempts: 5, initialIntervalMs: 10 } } });
    const [task] = (await poll(pool)).body.tasks;

    expect((await api("POST", `/v1/tasks/${task.token}/fail`, { error: { message: "corrupt image", retryable: false } })).status).toBe(200);

    const ended = await waitForStatus(id, "compensated");
    expect(ended.steps[0]).toMatchObject({ status: "failed", attempt: 1, error: { message: "corrupt image", retryable: false, rule: "reported" } });
    expect((await historyOf(id)).find((event) => event.type === "step_failed")?.data).toMatchObject({ final: true, error: { rule: "reported" } });
    expect((await poll(pool)).body.tasks).toEqual([]);
  });

  it("refuses a bad poll with a 400 naming the field", async () => {
    const bad = await api("POST", "/v1/pools/gpu/tasks/poll", { workerId: "", waitMs: 120_000 });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/workerId|waitMs/);
  });
});

describe("case 29: a worker dies holding a task", () => {
  it("retries it by the heartbeat deadline, hands the retry to exactly one poll, and answers the first worker's late report 409", async () => {
    const pool = uniquePool();
    const id = await startPooled(pool);
    const [dead] = (await poll(pool)).body.tasks;
    expect(dead.attempt).toBe(1);
    await backdate(id, { ms: 11_000 });
    await fireAlarm(id);
    const history = (await historyOf(id)).map((event) => `${event.type}#${event.attempt ?? ""}`);
    expect(history).toContain("step_heartbeat_missed#1");
    // The retry waits out its backoff, then is offered to the pool again.
    await backdate(id, { ms: 60_000 });
    await fireAlarm(id);
    const [retry] = (await poll(pool, { workerId: "w-2", waitMs: 2_000 })).body.tasks;
    expect(retry).toMatchObject({ workflowId: id, attempt: 2 });
    expect((await poll(pool)).body.tasks).toEqual([]);
    expect((await api("POST", `/v1/tasks/${dead.token}/complete`, { output: { late: true } })).status).toBe(409);
    expect((await api("POST", `/v1/tasks/${retry.token}/complete`, { output: { ok: true } })).status).toBe(200);
    expect((await waitForStatus(id, "completed")).output).toEqual({ resize: { ok: true } });
  });
});

describe("case 31: no worker for a pool", () => {
  it("says waiting_for_worker with the pool in the diagnosis, healthy, with no deadline of its own", async () => {
    const pool = uniquePool();
    const id = await startPooled(pool);
    const diagnosis = (await api("GET", `/v1/workflows/${id}/diagnosis`)).body;
    expect(diagnosis.blockedOn).toEqual([expect.objectContaining({ stepId: "resize", reason: "waiting_for_worker", pool })]);
    expect(diagnosis.healthy).toBe(true);
  });

  it("moves the task to the fallback pool after afterMs, from the alarm, without using an attempt", async () => {
    const pool = uniquePool();
    const fallback = `${pool}_eu`;
    const id = await startPooled(pool, { fields: { fallback: { pools: [fallback], afterMs: 30_000 } } });
    const before = await api("GET", `/v1/workflows/${id}/diagnosis`);
    expect(before.body.nextDeadline).toMatchObject({ reason: "reassign", stepId: "resize" });
    await backdate(id, { ms: 30_000 });
    await fireAlarm(id);
    const moved = (await historyOf(id)).find((event) => event.type === "task_reassigned");
    expect(moved).toMatchObject({ stepId: "resize", attempt: 1, data: { from: pool, to: fallback } });
    expect((await api("GET", `/v1/workflows/${id}/diagnosis`)).body.nextDeadline).toBeNull();
    expect((await poll(pool)).body.tasks).toEqual([]);
    const [task] = (await poll(fallback, { waitMs: 2_000 })).body.tasks;
    expect(task).toMatchObject({ workflowId: id, attempt: 1 });
    const step = (await getWorkflow(id)).steps.find((s: { id: string }) => s.id === "resize");
    expect(step.attempt).toBe(1);
  });
});

describe("a worker task that ends unclaimed", () => {
  it("leaves its pool's pending count when its workflow is cancelled", async () => {
    const pool = uniquePool();
    const cancelled = await startPooled(pool, { tenant: "gamma" });
    await startPooled(pool, { tenant: "gamma" });
    const pending = async () => (await api("GET", "/v1/pools", undefined, { headers: bearer("gamma") })).body.pools.find((p: { name: string }) => p.name === pool)?.pending;
    await vi.waitFor(async () => expect(await pending()).toBe(2));
    expect((await api("POST", `/v1/workflows/${cancelled}/cancel`, {}, { headers: bearer("gamma") })).status).toBe(202);
    await vi.waitFor(async () => expect(await pending()).toBe(1));
  });
});

describe("a worker step's verify (as for http)", () => {
  afterEach(() => vi.restoreAllMocks());
  const verify = { verify: { type: "http", url: `${REMOTE}/jobs/{{ workflow.id }}` } };

  /** A worker takes attempt 1 and dies; the heartbeat deadline and the backoff pass; the retry is offered. */
  async function retryAfterDeadWorker(pool: string): Promise<string> {
    const id = await startPooled(pool, { stepFields: verify });
    expect((await poll(pool)).body.tasks).toHaveLength(1);
    await backdate(id, { ms: 11_000 });
    await fireAlarm(id);
    await backdate(id, { ms: 60_000 });
    await fireAlarm(id);
    return id;
  }

  it("asks verify before handing out the retry: a 2xx ends the step with that output and no worker gets the task", async () => {
    const remote = mockRemote((call) => (call.method === "GET" ? json({ thumb: "done-earlier.png" }) : json({}, 500)));
    const pool = uniquePool();
    const id = await retryAfterDeadWorker(pool);
    expect((await poll(pool, { workerId: "w-2", waitMs: 1_000 })).body.tasks).toEqual([]);
    const done = await waitForStatus(id, "completed");
    expect(done.output).toEqual({ resize: { thumb: "done-earlier.png" } });
    expect((await historyOf(id)).map((event) => event.type)).toContain("step_verified");
    expect(remote.calls.map((call) => [call.method, call.headers["idempotency-key"], new URL(call.url).pathname])).toEqual([["GET", `${id}:resize`, `/jobs/${id}`]]);
  });

  it("hands the retry to a worker when verify answers 404", async () => {
    const remote = mockRemote(() => json({ error: "no such job" }, 404));
    const pool = uniquePool();
    const id = await retryAfterDeadWorker(pool);
    const [retry] = (await poll(pool, { workerId: "w-2", waitMs: 2_000 })).body.tasks;
    expect(retry).toMatchObject({ workflowId: id, attempt: 2 });
    expect(remote.calls).toHaveLength(1);
  });

  it("does not ask verify before a first attempt", async () => {
    const remote = mockRemote(() => json({}, 500));
    const pool = uniquePool();
    await startPooled(pool, { stepFields: verify });
    expect((await poll(pool, { waitMs: 1_000 })).body.tasks).toHaveLength(1);
    expect(remote.calls).toEqual([]);
  });
});
