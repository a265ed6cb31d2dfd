import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { api, historyOf, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { FAST } from "../engine/fixtures";
import { objectRecord, watchQueue } from "./support";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

const SCHEDULE_TO_START_MS = 200;

const definition = (extra: Record<string, unknown> = {}) => ({
  name: "enqueue-fails",
  defaults: { ...FAST, timeouts: { ...FAST.timeouts, scheduleToStartMs: SCHEDULE_TO_START_MS } },
  steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }],
  ...extra,
});

const attemptStatuses = (workflow: { steps: { attempts: { status: string }[] }[] }) => workflow.steps[0]!.attempts.map((attempt) => attempt.status);

describe("case 15: enqueue fails", () => {
  it("commits the start and its alarm before the send; the failed send is answered 201 all the same and the alarm dispatches the step again", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const queue = await watchQueue(id);
    injectFault("enqueueFails", { probability: 1, times: 1 });

    const started = await api("POST", "/v1/workflows", { id, definition: definition() });
    expect(timesFired("enqueueFails")).toBe(1);
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ id, status: "running", steps: [{ id: "a", status: "scheduled", attempt: 1 }] });

    // Before the send failed, the transition and its alarm (schedule-to-start of attempt 1) were committed.
    const stored = await objectRecord(id);
    expect(stored.workflow).toMatchObject({ status: "running", version: 1 });
    expect(stored.events!.map((event) => event.type)).toEqual(["workflow_started", "step_scheduled"]);
    expect(stored.alarmAt).toBe(started.body.steps[0].attempts[0].scheduledAt + SCHEDULE_TO_START_MS);
    expect(queue.of(id)).toEqual([]);

    // Every answer agrees meanwhile: read, list (the index) and a repeated start all show the same running workflow.
    expect((await api("GET", `/v1/workflows/${id}`)).body).toEqual(started.body);
    const again = await api("POST", "/v1/workflows", { id, definition: definition() });
    expect(again).toEqual({ status: 200, body: started.body });
    expect(await indexRow(id)).toMatchObject({ status: "running", version: 1 });

    const workflow = await waitForStatus(id, "completed");
    expect(attemptStatuses(workflow)).toEqual(["timed_out", "succeeded"]);
    expect(workflow.steps[0].attempts[0].error).toMatchObject({ timeout: "schedule_to_start" });
    const timedOut = (await historyOf(id)).find((event) => event.type === "step_timed_out");
    expect(timedOut).toMatchObject({ stepId: "a", attempt: 1 });
    expect(timedOut!.at).toBeGreaterThanOrEqual(stored.alarmAt!);
    // Only attempt 2 ever reached the queue, and the remote saw one request.
    expect(queue.of(id).map((entry) => entry.body.attempt)).toEqual([2]);
    expect(remote.requestsFor(`${id}:a`)).toBe(1);
    await vi.waitFor(async () => expect(await indexRow(id)).toMatchObject({ status: "completed", version: (await objectRecord(id)).workflow!.version }));
  });

  it("survives the queue refusing sends again and again (Too Many Requests, internal error): each attempt is retried from its deadline", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    // What the object tried to send, and what the queue took: the first two sends of this workflow throw as
    // the binding does when the queue refuses.
    const attempted: number[] = [];
    const delivered: number[] = [];
    const errors = ["Too Many Requests", "Queue send failed: internal error"];
    await runInDurableObject(schedulerStub(id), (instance) => {
      const tasks = (instance as unknown as { env: Env }).env.TASKS;
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

    const workflow = await waitForStatus(id, "completed");
    expect(attemptStatuses(workflow)).toEqual(["timed_out", "timed_out", "succeeded"]);
    expect(workflow.steps[0].attempts.slice(0, 2).map((attempt: { error: { timeout: string } }) => attempt.error.timeout)).toEqual(["schedule_to_start", "schedule_to_start"]);
    expect(attempted).toEqual([1, 2, 3]);
    expect(delivered).toEqual([3]);
    expect(remote.requestsFor(`${id}:a`)).toBe(1);
  });

  it("answers an operator's retry 202 when its send fails, and the alarm dispatches the retried step", async () => {
    const remote = mockRemote((_call, n) => (n === 1 ? json({ error: "declined" }, 422) : json({ ok: true })));
    const id = uniqueId();
    const queue = await watchQueue(id);
    expect((await api("POST", "/v1/workflows", { id, definition: definition({ onFailure: "escalate" }) })).status).toBe(201);
    await waitForStatus(id, "needs_attention");
    injectFault("enqueueFails", { probability: 1, times: 1 });

    const retried = await api("POST", `/v1/workflows/${id}/steps/a/retry`);
    expect(timesFired("enqueueFails")).toBe(1);
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ status: "running", steps: [{ status: "scheduled", attempt: 2 }] });
    const stored = await objectRecord(id);
    expect(stored.alarmAt).toBe(retried.body.steps[0].attempts[1].scheduledAt + SCHEDULE_TO_START_MS);
    expect((await api("GET", `/v1/workflows/${id}`)).body).toEqual(retried.body);

    const workflow = await waitForStatus(id, "completed");
    expect(attemptStatuses(workflow)).toEqual(["failed", "timed_out", "succeeded"]);
    expect(queue.of(id).map((entry) => entry.body.attempt)).toEqual([1, 3]);
    expect(remote.requestsFor(`${id}:a`)).toBe(2);
  });
});
