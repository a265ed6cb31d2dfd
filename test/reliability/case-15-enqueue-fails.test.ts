import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { api, historyOf, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { taskQueueOf, watchSends } from "../helpers/queue";
import { objectRecord, schedulerStub } from "../helpers/scheduler";
import { FAST } from "../helpers/policies";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

/** A failed send is tried again by the alarm after about 1 s (20 % jitter), then 2 s, 4 s … */
const FIRST_RESEND_MS = { min: 800, max: 1_200 };

const definition = (extra: Record<string, unknown> = {}) => ({
  name: "enqueue-fails",
  // No schedule-to-start: a send that failed is our own trouble, and the outbox, not a timeout, repairs it.
  defaults: { retry: FAST.retry, timeouts: { startToCloseMs: FAST.timeouts.startToCloseMs, heartbeatMs: FAST.timeouts.heartbeatMs } },
  steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }],
  ...extra,
});

const attemptStatuses = (workflow: { steps: { attempts: { status: string }[] }[] }) => workflow.steps[0]!.attempts.map((attempt) => attempt.status);

/** What is still in the object's outbox waiting for the queue. */
const unsentTasks = async (id: string) => ((await objectRecord(id)).outbox ?? []).filter((row) => row.kind === "task").length;

describe("case 15: enqueue fails", () => {
  it("commits the start, its unsent message and its alarm before the send; the failed send is answered 201 all the same and the alarm sends the same attempt again", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const queue = watchSends();
    injectFault("enqueueFails", { probability: 1, times: 1 });

    const started = await api("POST", "/v1/workflows", { id, definition: definition() });
    expect(timesFired("enqueueFails")).toBe(1);
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ id, status: "running", steps: [{ id: "a", status: "scheduled", attempt: 1 }] });

    // Before the send failed, the transition and its message were committed; the alarm is set to send it again.
    const stored = await objectRecord(id);
    expect(stored.workflow).toMatchObject({ status: "running", version: 1 });
    expect(stored.events!.map((event) => event.type)).toEqual(["workflow_started", "step_scheduled"]);
    const scheduledAt = started.body.steps[0].attempts[0].scheduledAt;
    expect(stored.alarmAt! - scheduledAt).toBeGreaterThanOrEqual(FIRST_RESEND_MS.min);
    expect(stored.alarmAt! - scheduledAt).toBeLessThanOrEqual(FIRST_RESEND_MS.max + 100);
    expect(await unsentTasks(id)).toBe(1);
    expect(queue.of(id)).toEqual([]);

    // Every answer agrees meanwhile: read, list (the index) and a repeated start all show the same running workflow.
    expect((await api("GET", `/v1/workflows/${id}`)).body).toEqual(started.body);
    const again = await api("POST", "/v1/workflows", { id, definition: definition() });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(started.body);
    expect(await indexRow(id)).toMatchObject({ status: "running", version: 1 });

    // The repeated start already delivered the outbox (any call does); the alarm would have, too.
    await runDurableObjectAlarm(schedulerStub(id));
    const workflow = await waitForStatus(id, "completed");
    expect(attemptStatuses(workflow)).toEqual(["succeeded"]);
    expect((await historyOf(id)).filter((event) => event.type === "step_timed_out")).toEqual([]);
    // Attempt 1 reached the queue once, and the remote saw one request.
    expect(queue.of(id).map((entry) => entry.message.attempt)).toEqual([1]);
    expect(remote.requestsFor(`${id}:a`)).toBe(1);
    expect(await unsentTasks(id)).toBe(0);
    await vi.waitFor(async () => expect(await indexRow(id)).toMatchObject({ status: "completed", version: (await objectRecord(id)).workflow!.version }));
  });

  it("survives the queue refusing sends again and again (Too Many Requests, internal error): the alarm sends the same attempt with backoff, using no attempt", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    // What the object tried to send, and what the queue took: the first two sends of this workflow throw as
    // the binding does when the queue refuses.
    const attempted: number[] = [];
    const delivered: number[] = [];
    const errors = ["Too Many Requests", "Queue send failed: internal error"];
    await runInDurableObject(schedulerStub(id), (instance) => {
      const tasks = taskQueueOf(id, (instance as unknown as { env: Env }).env);
      const real = tasks.sendBatch.bind(tasks);
      vi.spyOn(tasks, "sendBatch").mockImplementation(async (messages, options) => {
        const list = [...messages];
        const mine = list.map((message) => message.body as { workflowId: string; attempt: number }).filter((body) => body.workflowId === id);
        attempted.push(...mine.map((body) => body.attempt));
        if (mine.length > 0 && errors.length > 0) throw new Error(errors.shift());
        delivered.push(...mine.map((body) => body.attempt));
        return real(list, options);
      });
    });

    const started = await api("POST", "/v1/workflows", { id, definition: definition() });
    expect(started.status).toBe(201);
    expect(started.body.steps[0]).toMatchObject({ status: "scheduled", attempt: 1 });
    const firstRetry = (await objectRecord(id)).alarmAt! - started.body.steps[0].attempts[0].scheduledAt;
    expect(firstRetry).toBeGreaterThanOrEqual(FIRST_RESEND_MS.min);

    // Time moved, not waited for: the alarm's send fails again and backs off further; the next one gets through.
    await runDurableObjectAlarm(schedulerStub(id));
    const unsent = (await objectRecord(id)).outbox!.filter((row) => row.kind === "task");
    expect(unsent).toHaveLength(1);
    expect(unsent[0]!.attempts).toBe(2);
    expect(unsent[0]!.next_attempt_at - Date.now()).toBeGreaterThan(FIRST_RESEND_MS.max);
    await runDurableObjectAlarm(schedulerStub(id));

    const workflow = await waitForStatus(id, "completed");
    expect(attemptStatuses(workflow)).toEqual(["succeeded"]);
    expect(attempted).toEqual([1, 1, 1]);
    expect(delivered).toEqual([1]);
    expect(remote.requestsFor(`${id}:a`)).toBe(1);
  });

  it("answers an operator's retry 202 when its send fails, and the alarm dispatches the retried step", async () => {
    const remote = mockRemote((_call, n) => (n === 1 ? json({ error: "declined" }, 422) : json({ ok: true })));
    const id = uniqueId();
    const queue = watchSends();
    expect((await api("POST", "/v1/workflows", { id, definition: definition({ onFailure: "escalate" }) })).status).toBe(201);
    await waitForStatus(id, "needs_attention");
    injectFault("enqueueFails", { probability: 1, times: 1 });

    const retried = await api("POST", `/v1/workflows/${id}/steps/a/retry`);
    expect(timesFired("enqueueFails")).toBe(1);
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ status: "running", steps: [{ status: "scheduled", attempt: 2 }] });
    const stored = await objectRecord(id);
    expect(stored.alarmAt! - retried.body.steps[0].attempts[1].scheduledAt).toBeLessThanOrEqual(FIRST_RESEND_MS.max + 100);
    expect((await api("GET", `/v1/workflows/${id}`)).body).toEqual(retried.body);

    await runDurableObjectAlarm(schedulerStub(id));
    const workflow = await waitForStatus(id, "completed");
    expect(attemptStatuses(workflow)).toEqual(["failed", "succeeded"]);
    expect(queue.of(id).map((entry) => entry.message.attempt)).toEqual([1, 2]);
    expect(remote.requestsFor(`${id}:a`)).toBe(2);
  });
});
