import { afterEach, describe, expect, it, vi } from "vitest";
import { api, historyOf, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { FAST, PATIENT } from "../helpers/policies";
import { hang, json, mockRemote, REMOTE } from "../helpers/remote";
import { backdate, elapse, fireAlarm } from "../helpers/time";
import { callTask } from "../helpers/tasks";

afterEach(() => vi.restoreAllMocks());

const PROGRESS_MS = 60_000;

/** The remote takes the work (202) and reports through its task token, like a long render job. */
const renderJob = (name: string) => ({
  name,
  onFailure: "fail",
  defaults: { ...PATIENT, timeouts: { startToCloseMs: 3_600_000, heartbeatMs: 300_000, progressMs: PROGRESS_MS } },
  steps: [{ id: "render", action: { type: "http", url: `${REMOTE}/render` } }],
});

describe("progress stall (timeouts.progressMs)", () => {
  it("ends an attempt whose heartbeats go on stuck at the same progress, as stalled, and retries it like a timeout", async () => {
    const remote = mockRemote((_call, n) => (n === 1 ? json({}, 202) : json({ frames: 120 })));
    const id = uniqueId("stall");
    await start(renderJob("stuck-render"), { id });
    await waitForStep(id, "render", "waiting");
    const token = remote.calls[0]!.headers["shepherd-task-token"]!;

    // "At 47 %" for good: every heartbeat keeps the attempt alive, none moves it on.
    expect((await callTask(token, "heartbeat", { progress: { percent: 47 } })).status).toBe(200);
    await backdate(id, { ms: 30_000 });
    expect((await callTask(token, "heartbeat", { progress: { percent: 47 } })).status).toBe(200);
    await backdate(id, { ms: 30_001 });
    await fireAlarm(id);

    const workflow = (await api("GET", `/v1/workflows/${id}`)).body;
    expect(workflow.steps[0]).toMatchObject({ status: "retrying", progress: { percent: 47 } });
    expect(workflow.steps[0].attempts[0]).toMatchObject({ status: "timed_out", error: { timeout: "stalled", retryable: true } });
    const stalled = (await historyOf(id)).find((event) => event.type === "step_stalled");
    expect(stalled).toMatchObject({ stepId: "render", attempt: 1, data: { progressMs: PROGRESS_MS } });
    expect(stalled!.data.overdueMs).toBeLessThan(1_000);

    await elapse(id, PATIENT.retry.initialIntervalMs);
    expect((await waitForStatus(id, "completed")).output).toEqual({ render: { frames: 120 } });
    // A stalled attempt's token is fenced: the stuck job's late report changes nothing.
    expect((await callTask(token, "complete", { output: { late: true } })).status).toBe(410);
  });

  it("keeps an attempt whose progress moves, however long it runs", async () => {
    const remote = mockRemote(() => json({}, 202));
    const id = uniqueId("moving");
    await start(renderJob("moving-render"), { id });
    await waitForStep(id, "render", "waiting");
    const token = remote.calls[0]!.headers["shepherd-task-token"]!;
    for (let percent = 10; percent <= 90; percent += 20) {
      expect((await callTask(token, "heartbeat", { progress: { percent } })).status).toBe(200);
      await backdate(id, { ms: PROGRESS_MS - 1_000 });
      await fireAlarm(id);
    }
    expect((await api("GET", `/v1/workflows/${id}`)).body.steps[0]).toMatchObject({ status: "waiting", attempt: 1 });
    expect((await historyOf(id)).map((event) => event.type)).not.toContain("step_stalled");
    expect((await callTask(token, "complete", { output: { done: true } })).status).toBe(200);
    await waitForStatus(id, "completed");
  });

  // Real time: the agent's own heartbeats (every heartbeatMs / 3) while it waits for an answer carry no progress.
  it("does not stall an attempt on the agent's own heartbeats while it waits for an HTTP answer", async () => {
    mockRemote((call, n) => (n === 1 ? hang(call) : json({ ok: true })));
    const { id } = await start({
      name: "slow-answer",
      defaults: { ...FAST, timeouts: { startToCloseMs: 600, heartbeatMs: 150, progressMs: 100 } },
      steps: [{ id: "slow", action: { type: "http", url: `${REMOTE}/slow` } }],
    });
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts[0].error.timeout).toBe("start_to_close");
    expect((await historyOf(id)).map((event) => event.type)).not.toContain("step_stalled");
  });
});
