import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WorkflowStore } from "../../src/workflow/store";
import type { WorkflowScheduler } from "../../src/workflow/object";
import { api, historyOf, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { FAST, PATIENT } from "../helpers/policies";
import { holdBackSends, taskQueueOf } from "../helpers/queue";
import { hang, json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { elapse } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

type Internals = { store: { persist: (...args: unknown[]) => void; load: () => unknown }; env: Env };
const internals = (instance: WorkflowScheduler) => instance as unknown as Internals;

const oneStep = (defaults: unknown) => ({
  name: "faults",
  defaults,
  steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }],
});

/** A failing alarm sets itself again this much later (src/workflow/alarm.ts). */
const ALARM_FAILURE_RETRY_MS = 1_000;
/** A step's schedule-to-start in these tests: long, so only moved time passes it. */
const SCHEDULE_TO_START_MS = 20_000;

describe("faults inside the scheduler", () => {
  it("case 11 (alarm handler throws): loses nothing when the alarm throws: it sets itself again and the step is retried once", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    holdBackSends(id);
    await start(oneStep(PATIENT), { id });
    await schedulerStub(id).claim("charge", 1);
    // The object's first write after this fails (on the prototype: the spy outlives the evictions of moved time).
    const persistOnce = WorkflowStore.prototype.persist;
    let failed = false;
    const persist = vi.spyOn(WorkflowStore.prototype, "persist").mockImplementation(function (this: WorkflowStore, ...args) {
      if (!failed && args[0].id === id) {
        failed = true;
        throw new Error("injected storage failure");
      }
      return persistOnce.apply(this, args);
    });

    // The heartbeat deadline passes: the alarm fails; the alarm it set again a second later does the work.
    await elapse(id, PATIENT.timeouts.heartbeatMs);
    await elapse(id, ALARM_FAILURE_RETRY_MS);
    await elapse(id, PATIENT.retry.initialIntervalMs);
    const workflow = await waitForStatus(id, "completed");
    // The first alarm failed before anything was written; the alarm it set again a second later did the work.
    expect(persist.mock.calls.filter(([state]) => state.id === id).length).toBeGreaterThanOrEqual(2);
    expect(workflow.steps[0].attempts.map((a: { status: string }) => a.status)).toEqual(["timed_out", "succeeded"]);
    const missed = (await historyOf(id)).filter((event) => event.type === "step_heartbeat_missed");
    expect(missed).toHaveLength(1);
    expect(remote.requestsFor(`${id}:charge`)).toBe(1);
  });

  it("case 11 (alarm handler throws): re-arms itself a second later on any failure, on the platform's last retry too, and leaves retrying to the platform only when storage fails", async () => {
    const id = uniqueId();
    holdBackSends(id);
    await start(oneStep({ ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 60_000 } }), { id });
    const outcome = await runInDurableObject(schedulerStub(id), async (instance, state) => {
      const load = vi.spyOn(internals(instance).store, "load").mockImplementation(() => {
        throw new Error("injected storage failure");
      });
      const rearmed: (number | null)[] = [];
      for (const retryCount of [0, 2, 5]) {
        await state.storage.deleteAlarm();
        const before = Date.now();
        await instance.alarm({ retryCount, isRetry: retryCount > 0, scheduledTime: before });
        const alarm = await state.storage.getAlarm();
        rearmed.push(alarm === null ? null : alarm - before);
      }
      // If even setting the alarm fails, the handler throws, so the platform's own retries take over.
      const setAlarm = vi.spyOn(state.storage, "setAlarm").mockRejectedValue(new Error("storage down"));
      const thrown = await instance.alarm({ retryCount: 0, isRetry: false, scheduledTime: Date.now() }).then(() => undefined, (error: Error) => error.message);
      setAlarm.mockRestore();
      load.mockRestore();
      return { rearmed, thrown };
    });
    for (const delay of outcome.rearmed) {
      expect(delay).toBeGreaterThanOrEqual(900);
      expect(delay).toBeLessThanOrEqual(1_500);
    }
    expect(outcome.thrown).toBe("injected storage failure");
    await schedulerStub(id).command({ command: "cancel", by: { actor: "operator" } });
  });

  it("case 15 (enqueue fails): recovers from a failed enqueue: the committed attempt times out before start and is dispatched again", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    await runInDurableObject(schedulerStub(id), (instance) => {
      vi.spyOn(taskQueueOf(id, internals(instance).env), "sendBatch").mockRejectedValueOnce(new Error("Too Many Requests"));
    });
    const started = await api("POST", "/v1/workflows", { id, definition: oneStep({ ...PATIENT, timeouts: { ...PATIENT.timeouts, scheduleToStartMs: SCHEDULE_TO_START_MS } }) });
    expect(started.status).toBe(201);
    // Attempt 1 never starts; its schedule-to-start passes, then the retry's backoff.
    await elapse(id, SCHEDULE_TO_START_MS);
    await elapse(id, PATIENT.retry.initialIntervalMs);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts[0]).toMatchObject({ status: "timed_out", error: { timeout: "schedule_to_start" } });
    expect(remote.requestsFor(`${id}:charge`)).toBe(1);
  });

  it("ends a workflow past its timeoutMs, compensating the step that was in flight", async () => {
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/ship" ? hang(call) : json({ ok: true })));
    const timeoutMs = 20_000;
    const { id } = await start({
      name: "deadline",
      timeoutMs,
      defaults: PATIENT,
      steps: [
        { id: "charge", action: { type: "http", url: `${REMOTE}/charge` }, compensate: { type: "http", url: `${REMOTE}/refund` } },
        { id: "ship", action: { type: "http", url: `${REMOTE}/ship` }, compensate: { type: "http", url: `${REMOTE}/unship` } },
      ],
    });
    await waitForStep(id, "ship", "running");
    await elapse(id, timeoutMs);
    const workflow = await waitForStatus(id, "compensated");
    expect(workflow.error.timeout).toBe("workflow_timeout");
    // The interrupted step may have taken effect, so it is compensated first, then the completed one.
    expect(remote.calls.map((call) => new URL(call.url).pathname).slice(2)).toEqual(["/unship", "/refund"]);
  });
});
