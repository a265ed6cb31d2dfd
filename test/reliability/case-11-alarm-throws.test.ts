import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { WorkflowScheduler } from "../../src/workflow/object";
import { getWorkflow, historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { FAST, PATIENT } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { objectRecord, schedulerStub } from "../helpers/scheduler";
import { elapse } from "../helpers/time";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

/** A failing alarm sets itself again this much later (src/workflow/alarm.ts). */
const ALARM_FAILURE_RETRY_MS = 1_000;

/** Every run of any scheduler's alarm handler: when, with what retry information, and whether it threw. */
function watchAlarms() {
  const runs: { at: number; retryCount: number; isRetry: boolean; threw: boolean }[] = [];
  const alarm = WorkflowScheduler.prototype.alarm;
  vi.spyOn(WorkflowScheduler.prototype, "alarm").mockImplementation(async function (this: WorkflowScheduler, info?: AlarmInvocationInfo) {
    const run = { at: Date.now(), retryCount: info?.retryCount ?? 0, isRetry: info?.isRetry ?? false, threw: false };
    runs.push(run);
    try {
      return await alarm.call(this, info);
    } catch (error) {
      run.threw = true;
      throw error;
    }
  });
  return runs;
}

/** Short deadlines, for the tests about the runtime's own alarm; the others move time past realistic ones. */
const REAL_TIME = { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 150 } };

const oneStep = (name: string, options: { defaults?: typeof FAST | typeof PATIENT; maxAttempts?: number; onFailure?: string } = {}) => {
  const defaults = options.defaults ?? PATIENT;
  return {
    name,
    ...(options.onFailure ? { onFailure: options.onFailure } : {}),
    defaults: { ...defaults, retry: { ...defaults.retry, maxAttempts: options.maxAttempts ?? defaults.retry.maxAttempts } },
    steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }],
  };
};

/**
 * Starts the workflow with attempt 1's message held back and claims attempt 1 as an agent that then dies, so the
 * next thing due is the heartbeat deadline, which only the alarm can act on. Later attempts go to the real queue.
 */
async function startWithDeadAgent(definition: ReturnType<typeof oneStep>) {
  const id = uniqueId();
  const sends = watchSends((message) => message.workflowId === id && message.attempt === 1);
  await start(definition, { id });
  const claim = await schedulerStub(id).claim("charge", 1);
  expect(claim.ok).toBe(true);
  return { id, sends };
}

const eventsOf = async (id: string, type: string) => (await historyOf(id)).filter((event) => event.type === type);

describe("case 11: alarm handler throws", () => {
  it("re-arms itself 1 s later when the alarm throws, on the real alarm and on the platform's retryCount 5 alike; the next run times the attempt out once", async () => {
    const remote = mockRemote(() => json({ charged: true }));
    const alarms = watchAlarms();
    const { id } = await startWithDeadAgent(oneStep("alarm-throws", { defaults: REAL_TIME }));
    injectFault("alarmThrows", { probability: 1, times: 2 });

    // The real alarm fires at the heartbeat deadline and throws; it leaves the state alone and sets itself again.
    await vi.waitFor(() => expect(timesFired("alarmThrows")).toBe(1), { timeout: 5_000, interval: 10 });
    const [failed] = alarms;
    expect(failed).toMatchObject({ retryCount: 0, threw: false });
    expect((await getWorkflow(id)).steps[0].attempts[0].status).toBe("running");
    const firstRearm = (await objectRecord(id)).alarmAt!;
    expect(firstRearm - failed!.at).toBeGreaterThanOrEqual(ALARM_FAILURE_RETRY_MS - 100);
    expect(firstRearm - failed!.at).toBeLessThanOrEqual(ALARM_FAILURE_RETRY_MS + 500);

    // The platform's late retry (retryCount 5) fails too, and re-arms the same way rather than giving up.
    const last = await runInDurableObject(schedulerStub(id), async (instance, state) => {
      const before = Date.now();
      await instance.alarm({ retryCount: 5, isRetry: true, scheduledTime: before });
      return { before, alarmAt: await state.storage.getAlarm() };
    });
    expect(timesFired("alarmThrows")).toBe(2);
    expect(last.alarmAt! - last.before).toBeGreaterThanOrEqual(ALARM_FAILURE_RETRY_MS - 100);
    expect(last.alarmAt! - last.before).toBeLessThanOrEqual(ALARM_FAILURE_RETRY_MS + 500);
    expect((await getWorkflow(id)).steps[0].attempts[0].status).toBe("running");

    // Supervision did not lapse: the alarm it set fires (a second on) and does the work, once.
    await elapse(id, ALARM_FAILURE_RETRY_MS);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    const missed = await eventsOf(id, "step_heartbeat_missed");
    expect(missed).toHaveLength(1);
    expect(missed[0]!.data.overdueMs).toBeGreaterThanOrEqual(ALARM_FAILURE_RETRY_MS - 100);
    expect(missed[0]!.data.overdueMs).toBeLessThan(3 * ALARM_FAILURE_RETRY_MS);
    expect(remote.requestsFor(`${id}:charge`)).toBe(1);

    // And it is idempotent: more (late, repeated) runs of the alarm change nothing.
    const before = await objectRecord(id);
    await runInDurableObject(schedulerStub(id), async (instance) => {
      await instance.alarm({ retryCount: 5, isRetry: true, scheduledTime: Date.now() });
      await instance.alarm({ retryCount: 5, isRetry: true, scheduledTime: Date.now() });
    });
    expect(await objectRecord(id)).toEqual(before);
    expect(before.alarmAt).toBeNull();
  });

  it("runs the alarm again a second later when storage fails after its commit: the guard set before the tick fires, not the platform's 2 s retry, and it does not apply the timeout again", async () => {
    mockRemote(() => json({ charged: true }));
    const alarms = watchAlarms();
    // Real time: what the runtime does after a throwing alarm is what is shown.
    const { id } = await startWithDeadAgent(oneStep("alarm-storage-fails", { defaults: REAL_TIME }));
    // Three alarm writes: the guard before the tick is written; the commit's own alarm (after the timeout) fails,
    // and so does re-arming after that failure, so the handler throws.
    const setAlarm = await runInDurableObject(schedulerStub(id), (_instance, state) => {
      const written = state.storage.setAlarm.bind(state.storage);
      return vi
        .spyOn(state.storage, "setAlarm")
        .mockImplementationOnce(written)
        .mockRejectedValueOnce(new Error("injected storage failure"))
        .mockRejectedValueOnce(new Error("injected storage failure"));
    });

    const workflow = await waitForStatus(id, "completed");
    const [failed, rerun] = alarms;
    expect(failed).toMatchObject({ retryCount: 0, isRetry: false, threw: true });
    expect(setAlarm.mock.settledResults.slice(0, 3).map((result) => result.type)).toEqual(["fulfilled", "rejected", "rejected"]);
    // An alarm set during a failed handler runs instead of the platform's retry (retryCount 1, after about 2 s).
    expect(rerun).toMatchObject({ retryCount: 0, isRetry: false, threw: false });
    expect(rerun!.at - failed!.at).toBeGreaterThanOrEqual(ALARM_FAILURE_RETRY_MS - 100);
    expect(rerun!.at - failed!.at).toBeLessThan(1_500);
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    // The failed run had committed the timeout; the next run went on from there instead of timing it out again.
    const missed = await eventsOf(id, "step_heartbeat_missed");
    expect(missed).toHaveLength(1);
    expect(missed[0]!.at).toBeLessThan(rerun!.at);
    expect(await eventsOf(id, "step_retry_scheduled")).toHaveLength(1);
  });

  it("leaves retrying to the platform when storage fails before the tick: no guard, no re-arm, so the runtime retries with retryCount 1, which does the work once", async () => {
    mockRemote(() => json({ charged: true }));
    const alarms = watchAlarms();
    // Real time: the runtime's own retry of a throwing alarm is what is shown.
    const { id } = await startWithDeadAgent(oneStep("alarm-storage-down", { defaults: REAL_TIME }));
    // Two alarm writes fail: the guard before the tick, then re-arming after that failure.
    const setAlarm = await runInDurableObject(schedulerStub(id), (_instance, state) =>
      vi.spyOn(state.storage, "setAlarm").mockRejectedValueOnce(new Error("injected storage failure")).mockRejectedValueOnce(new Error("injected storage failure")),
    );

    const workflow = await waitForStatus(id, "completed");
    const [failed, retried] = alarms;
    expect(failed).toMatchObject({ retryCount: 0, isRetry: false, threw: true });
    expect(retried).toMatchObject({ retryCount: 1, isRetry: true, threw: false });
    expect(setAlarm.mock.settledResults.slice(0, 2).map((result) => result.type)).toEqual(["rejected", "rejected"]);
    // Cloudflare retries a throwing alarm after about 2 s.
    expect(retried!.at - failed!.at).toBeGreaterThanOrEqual(1_500);
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    // The failed run stopped before its tick; the retry applied the timeout, once.
    const missed = await eventsOf(id, "step_heartbeat_missed");
    expect(missed).toHaveLength(1);
    expect(missed[0]!.at).toBeGreaterThanOrEqual(retried!.at);
    expect(await eventsOf(id, "step_retry_scheduled")).toHaveLength(1);
  });

  it("keeps a D1 error inside the alarm from losing the status: the object ends failed at once and the alarm retries the index write", async () => {
    mockRemote(() => json({ charged: true }));
    const { id } = await startWithDeadAgent(oneStep("alarm-d1-fails", { maxAttempts: 1, onFailure: "fail" }));
    expect((await indexRow(id))?.status).toBe("running");
    // The alarm's transition ends the workflow; its index write to D1 fails.
    injectFault("indexWriteFails", { probability: 1, times: 1 });

    await elapse(id, PATIENT.timeouts.heartbeatMs);
    await waitForStatus(id, "failed");
    expect(timesFired("indexWriteFails")).toBe(1);
    const failedAt = (await getWorkflow(id)).endedAt;
    const stored = await objectRecord(id);
    expect((await indexRow(id))?.status).toBe("running");
    // A terminal workflow needs no alarm of its own; this one is for the index write, about 1 s later.
    expect(stored.alarmAt! - failedAt).toBeGreaterThanOrEqual(900);
    expect(stored.alarmAt! - failedAt).toBeLessThanOrEqual(1_500);

    await elapse(id, 1_000);
    // The index takes the object's end (its times moved back with the rest of the workflow's).
    expect(await indexRow(id)).toMatchObject({ status: "failed", version: stored.workflow!.version, ended_at: (await getWorkflow(id)).endedAt });
    expect((await objectRecord(id)).alarmAt).toBeNull();
  });

  it("keeps a queue error inside the alarm from stranding the retry: the unsent attempt stays in the outbox and the alarm sends it again, using no attempt", async () => {
    const remote = mockRemote(() => json({ charged: true }));
    const { id, sends } = await startWithDeadAgent(oneStep("alarm-enqueue-fails"));
    // The first send after the start is the alarm's, dispatching attempt 2 after the heartbeat timeout: it fails.
    injectFault("enqueueFails", { probability: 1, times: 1 });

    await elapse(id, PATIENT.timeouts.heartbeatMs);
    await elapse(id, PATIENT.retry.initialIntervalMs);
    expect(timesFired("enqueueFails")).toBe(1);
    // The alarm sends it again once the send's backoff (1 s, ± 20 %) has passed.
    await elapse(id, 1_200);
    const workflow = await waitForStatus(id, "completed");
    expect(timesFired("enqueueFails")).toBe(1);
    expect(workflow.steps[0].attempts.map((attempt: { status: string; error?: { timeout?: string } }) => [attempt.status, attempt.error?.timeout])).toEqual([
      ["timed_out", "heartbeat"],
      ["succeeded", undefined],
    ]);
    // Attempt 2's first send failed; the alarm sent it again, and it ran once.
    expect(sends.of(id).map((entry) => entry.message.attempt)).toEqual([1, 2]);
    expect(remote.calls.map((call) => call.headers["shepherd-attempt"])).toEqual(["2"]);
  });
});
