import { afterEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { WorkflowScheduler } from "../../src/workflow/object";
import { getWorkflow, historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { hang, json, mockRemote, REMOTE } from "../helpers/remote";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

/** The agent gives up on its request this long after the start-to-close deadline (src/agents/perform-task.ts). */
const ABORT_GRACE_MS = 1_000;

/**
 * A remote whose first request never answers until it is aborted, then answers the retry; it notes when and
 * why the hung request was aborted.
 */
function hungThenHealthy() {
  const aborts: { at: number; reason: unknown }[] = [];
  const remote = mockRemote((call, n) => {
    if (n > 1) return json({ ok: true });
    call.signal?.addEventListener("abort", () => aborts.push({ at: Date.now(), reason: call.signal?.reason }));
    return hang(call);
  });
  return { remote, aborts };
}

/** The reports agents made to the object for one attempt, with the object's replies. */
async function reportsFor(reports: MockInstance<WorkflowScheduler["report"]>, stepId: string, attempt: number) {
  const found = [];
  for (const [i, args] of reports.mock.calls.entries()) {
    if (args[0] === stepId && args[1] === attempt) found.push({ report: args[2], reply: await reports.mock.results[i]!.value });
  }
  return found;
}

// Real time in both: what stops the hung request is the agent's own timers (its heartbeats, every heartbeatMs / 3,
// and its start-to-close backstop), which run on the real clock; the deadlines are short rather than moved.
describe("case 2: hung remote", () => {
  it("times the attempt out at startToCloseMs although its agent keeps heartbeating; the agent then aborts the hung request and reports the failure", async () => {
    const startToCloseMs = 400;
    const heartbeatMs = 120;
    const { remote, aborts } = hungThenHealthy();
    const reports = vi.spyOn(WorkflowScheduler.prototype, "report");
    const id = uniqueId();
    // Attempt 2 is held back until attempt 1's agent has reported, so that report meets a step still in progress.
    const sends = watchSends((message) => message.workflowId === id && message.attempt === 2);
    await start(
      { name: "hung", defaults: { ...FAST, timeouts: { scheduleToStartMs: 5_000, startToCloseMs, heartbeatMs } }, steps: [{ id: "slow", action: { type: "http", url: `${REMOTE}/slow` } }] },
      { id },
    );

    // The object enforces the step's own deadline: start-to-close, not a missed heartbeat.
    await vi.waitFor(() => expect(sends.of(id).map((entry) => entry.message.attempt)).toEqual([1, 2]), { timeout: 5_000, interval: 10 });
    const retrying = await getWorkflow(id);
    const [first] = retrying.steps[0].attempts;
    expect(first).toMatchObject({ status: "timed_out", error: { timeout: "start_to_close", retryable: true } });
    const timedOut = (await historyOf(id)).find((event) => event.type === "step_timed_out")!;
    expect(timedOut).toMatchObject({ attempt: 1, data: { timeout: "start_to_close", deadlineAt: first.startedAt + startToCloseMs } });
    expect(timedOut.data.overdueMs).toBeLessThan(1_000);
    expect((await historyOf(id)).some((event) => event.type === "step_heartbeat_missed")).toBe(false);
    // The agent did keep heartbeating: the last heartbeat came long after the first heartbeat deadline had passed.
    expect(retrying.steps[0].lastHeartbeatAt).toBeGreaterThan(first.startedAt + 2 * heartbeatMs);

    // The agent hears at its next heartbeat that the attempt is over, aborts the hung request and reports it failed;
    // the object refuses that report from an attempt that is no longer current.
    await vi.waitFor(async () => expect(await reportsFor(reports, "slow", 1)).toHaveLength(1), { timeout: 5_000, interval: 10 });
    expect(aborts).toHaveLength(1);
    expect(remote.calls[0]!.signal?.aborted).toBe(true);
    expect(aborts[0]!.at).toBeGreaterThanOrEqual(first.endedAt);
    expect(aborts[0]!.at).toBeLessThan(first.startedAt + startToCloseMs + ABORT_GRACE_MS);
    const [late] = await reportsFor(reports, "slow", 1);
    expect(late!.report).toMatchObject({ type: "failed", error: { message: expect.stringMatching(/^request aborted/), retryable: true } });
    expect(late!.reply).toMatchObject({ ok: false, code: "stale_attempt" });
    // What told it: a heartbeat refused after the timeout, then its failure report refused too.
    expect(aborts[0]!.reason).toBe("attempt is no longer current");
    const refused = (await historyOf(id)).filter((event) => event.type === "stale_report_rejected");
    expect(refused.every((event) => event.stepId === "slow" && event.attempt === 1)).toBe(true);
    expect(refused[0]).toMatchObject({ data: { report: "heartbeat" } });
    expect(refused[0]!.at).toBeGreaterThanOrEqual(first.endedAt);
    expect(refused.at(-1)).toMatchObject({ data: { report: "fail" } });

    await sends.release();
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    expect(remote.requestsFor(`${id}:slow`)).toBe(2);
  });

  it("aborts the hung request on the agent's own start-to-close timer when the agent cannot hear from the object, and reports the failure", async () => {
    const startToCloseMs = 300;
    const { remote, aborts } = hungThenHealthy();
    const reports = vi.spyOn(WorkflowScheduler.prototype, "report");
    // Attempt 1's agent sends no heartbeats, so no refused heartbeat can tell it the attempt is over: only its timer.
    injectFault("dropHeartbeats", { probability: 1, times: 1 });
    const id = uniqueId();
    const sends = watchSends((message) => message.workflowId === id && message.attempt === 2);
    await start(
      {
        name: "hung-silent",
        // The heartbeat timeout is longer than start-to-close, so start-to-close is the deadline that passes.
        defaults: { ...FAST, timeouts: { scheduleToStartMs: 5_000, startToCloseMs, heartbeatMs: 5_000 } },
        steps: [{ id: "slow", action: { type: "http", url: `${REMOTE}/slow` } }],
      },
      { id },
    );

    await vi.waitFor(async () => expect(await reportsFor(reports, "slow", 1)).toHaveLength(1), { timeout: 5_000, interval: 10 });
    expect(timesFired("dropHeartbeats")).toBe(1);
    const [first] = (await getWorkflow(id)).steps[0].attempts;
    expect(first).toMatchObject({ status: "timed_out", error: { timeout: "start_to_close" } });
    const deadlineAt = first.startedAt + startToCloseMs;
    // The object acted at the deadline; the agent's own timer aborted the request once the deadline (and its
    // grace) had passed, with the deadline as the reason.
    expect(first.endedAt - deadlineAt).toBeLessThan(1_000);
    expect(aborts).toHaveLength(1);
    expect(aborts[0]!.reason).toBe("startToCloseMs passed");
    expect(aborts[0]!.at).toBeGreaterThanOrEqual(deadlineAt);
    expect(aborts[0]!.at).toBeLessThan(deadlineAt + ABORT_GRACE_MS + 1_000);
    const [late] = await reportsFor(reports, "slow", 1);
    expect(late!.report).toMatchObject({ type: "failed", error: { message: "request aborted: startToCloseMs passed", retryable: true } });
    expect(late!.reply).toMatchObject({ ok: false, code: "stale_attempt" });

    await sends.release();
    await waitForStatus(id, "completed");
    expect(remote.requestsFor(`${id}:slow`)).toBe(2);
  });
});
