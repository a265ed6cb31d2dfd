import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WorkflowScheduler } from "../../src/workflow/object";
import { api, historyOf, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { gate } from "../helpers/gate";
import { FAST, PATIENT } from "../helpers/policies";
import { holdBackSends } from "../helpers/queue";
import { alarmOf, objectRecord, schedulerStub } from "../helpers/scheduler";
import { callTask } from "../helpers/tasks";
import { elapse } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

/** What only lives in the instance's memory: a marker this test leaves, and the store's cached state. */
type Memory = { evictionMarker?: string; store: { cached?: unknown } };
const memoryOf = (instance: WorkflowScheduler) => instance as unknown as Memory;

/** Marks the live instance, so the test can tell a fresh one (rebuilt from SQLite) from the one it evicted. */
async function markInstance(id: string): Promise<void> {
  await runInDurableObject(schedulerStub(id), (instance: WorkflowScheduler) => {
    memoryOf(instance).evictionMarker = "before eviction";
    expect(memoryOf(instance).store.cached).toBeDefined();
  });
}

/** Evicts the object and shows the next instance starts with nothing in memory. */
async function evictAndCheckFresh(id: string): Promise<void> {
  await evictDurableObject(schedulerStub(id));
  const fresh = await runInDurableObject(schedulerStub(id), (instance: WorkflowScheduler) => ({
    marker: memoryOf(instance).evictionMarker,
    cached: memoryOf(instance).store.cached,
  }));
  expect(fresh).toEqual({ marker: undefined, cached: undefined });
}

const waitingStep = {
  name: "evicted-waiting",
  defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 60_000, startToCloseMs: 60_000 } },
  steps: [{ id: "render", action: { type: "http", url: `${REMOTE}/render` } }],
};

describe("case 12: eviction mid-step", () => {
  it("reloads a waiting step from SQLite after eviction, keeps its alarm armed and accepts the remote's completion", async () => {
    const remote = mockRemote(() => json({ accepted: true }, 202));
    const { id } = await start(waitingStep);
    await waitForStep(id, "render", "waiting");
    const token = remote.calls[0]!.headers["shepherd-task-token"]!;
    const view = (await api("GET", `/v1/workflows/${id}`)).body;
    const stored = await objectRecord(id);
    expect(stored.alarmAt).toEqual(expect.any(Number));
    await markInstance(id);

    await evictAndCheckFresh(id);

    // The fresh instance holds exactly what was stored: the same view, the same rows, the same alarm.
    expect(await objectRecord(id)).toEqual(stored);
    expect((await api("GET", `/v1/workflows/${id}`)).body).toEqual(view);
    expect(await alarmOf(id)).toBe(stored.alarmAt);

    // The remote finishes after the eviction: its completion is accepted once, and only once.
    expect(await callTask(token, "complete", { output: { url: "https://cdn.example/out.png" } })).toEqual({ status: 200, body: { ok: true } });
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output).toEqual({ render: { url: "https://cdn.example/out.png" } });
    expect(workflow.steps[0].attempts).toHaveLength(1);
    expect((await callTask(token, "complete", { output: { again: true } })).status).toBe(410);
    expect((await historyOf(id)).filter((event) => event.type === "workflow_completed")).toHaveLength(1);
    expect(remote.requestsFor(`${id}:render`)).toBe(1);
    await vi.waitFor(async () => expect((await indexRow(id))?.status).toBe("completed"));
    expect(await alarmOf(id)).toBeNull();
  });

  it("accepts the agent's report after the object was evicted while the agent's request was in flight", async () => {
    const slow = gate();
    const remote = mockRemote(async (call) => {
      if (new URL(call.url).pathname === "/slow") await slow.opened;
      return json({ path: new URL(call.url).pathname });
    });
    const { id } = await start({
      name: "evicted-running",
      defaults: FAST,
      steps: [
        { id: "slow", action: { type: "http", url: `${REMOTE}/slow` } },
        { id: "after", action: { type: "http", url: `${REMOTE}/after` } },
      ],
    });
    await waitForStep(id, "slow", "running");
    const armed = await alarmOf(id);
    expect(armed).toEqual(expect.any(Number));
    await markInstance(id);

    await evictAndCheckFresh(id);
    expect(await alarmOf(id)).toBe(armed);
    expect((await api("GET", `/v1/workflows/${id}`)).body.steps.map((step: { status: string }) => step.status)).toEqual(["running", "pending"]);

    slow.open();
    const workflow = await waitForStatus(id, "completed");
    // The report of the attempt that was running through the eviction was accepted: no timeout, no retry.
    expect(workflow.steps.map((step: { attempts: unknown[] }) => step.attempts.length)).toEqual([1, 1]);
    expect(workflow.output).toEqual({ slow: { path: "/slow" }, after: { path: "/after" } });
    expect(remote.requestsFor(`${id}:slow`)).toBe(1);
    expect(remote.requestsFor(`${id}:after`)).toBe(1);
  });

  it("keeps supervising after eviction: the alarm armed before it times out a silent attempt and the retry completes", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    holdBackSends(id);
    await start({ ...waitingStep, name: "evicted-silent", defaults: PATIENT }, { id });
    // An agent claims attempt 1 and then goes silent; the object is evicted before the heartbeat deadline.
    expect(await schedulerStub(id).claim("render", 1)).toMatchObject({ ok: true });
    const armed = await alarmOf(id);
    await markInstance(id);

    await evictAndCheckFresh(id);
    expect(await alarmOf(id)).toBe(armed);

    // The heartbeat deadline passes and the alarm armed before the eviction fires; then the retry's backoff.
    await elapse(id, PATIENT.timeouts.heartbeatMs);
    await elapse(id, PATIENT.retry.initialIntervalMs);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    const missed = (await historyOf(id)).filter((event) => event.type === "step_heartbeat_missed");
    expect(missed).toEqual([expect.objectContaining({ stepId: "render", attempt: 1 })]);
    expect(remote.requestsFor(`${id}:render`)).toBe(1);
  });
});
