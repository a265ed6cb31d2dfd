import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, historyOf, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { FAST, PATIENT } from "../helpers/policies";
import { holdBackSends } from "../helpers/queue";
import { hang, json, mockRemote, REMOTE } from "../helpers/remote";
import { alarmOf, schedulerStub } from "../helpers/scheduler";
import { elapse } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

describe("the supervisor (the object's alarm)", () => {
  it("retries a step whose agent died after claiming it, at the heartbeat deadline, with exactly one remote effect", async () => {
    const remote = mockRemote(() => json({ charged: true }));
    const id = uniqueId();
    const held = holdBackSends(id);
    const { heartbeatMs } = PATIENT.timeouts;
    await start({ name: "agent-dies", defaults: PATIENT, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }] }, { id });
    // The dying agent: it claims attempt 1, then never heartbeats or reports.
    expect(held).toHaveLength(1);
    const claim = await schedulerStub(id).claim("charge", 1);
    expect(claim.ok).toBe(true);

    // The heartbeat deadline passes, then the retry's backoff; attempt 2 goes to a live agent.
    await elapse(id, heartbeatMs);
    await elapse(id, PATIENT.retry.initialIntervalMs);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((a: { status: string }) => a.status)).toEqual(["timed_out", "succeeded"]);
    expect(remote.requestsFor(`${id}:charge`)).toBe(1);
    const missed = (await historyOf(id)).find((event) => event.type === "step_heartbeat_missed");
    expect(missed?.attempt).toBe(1);
    // Detected by the alarm at the heartbeat deadline, not by polling.
    expect(missed!.data.overdueMs).toBeLessThan(1_000);
    expect(missed!.at - claimedAt(workflow)).toBeGreaterThanOrEqual(heartbeatMs);
  });

  // Real time: the agent's own heartbeats (every heartbeatMs / 3) keep the attempt alive and, once it has timed
  // out, tell the agent to abort the hung request, so the deadlines are short rather than moved.
  it("case 2 (hung remote): times out a hung remote at startToCloseMs even while the agent keeps heartbeating", async () => {
    const remote = mockRemote((call, n) => (n === 1 ? hang(call) : json({ ok: true })));
    const definition = {
      name: "hung",
      defaults: { ...FAST, timeouts: { scheduleToStartMs: 5_000, startToCloseMs: 400, heartbeatMs: 150 } },
      steps: [{ id: "slow", action: { type: "http", url: `${REMOTE}/slow` } }],
    };
    const { id } = await start(definition);
    const workflow = await waitForStatus(id, "completed");
    const [first, second] = workflow.steps[0].attempts;
    expect(first.status).toBe("timed_out");
    expect(first.error.timeout).toBe("start_to_close");
    expect(second.status).toBe("succeeded");
    expect(remote.requestsFor(`${id}:slow`)).toBe(2);
    // The hung request was aborted rather than left running.
    expect(remote.calls[0]?.signal?.aborted).toBe(true);
  });

  it("fires an armed alarm early without harm: nothing due, nothing changes, the alarm stays armed", async () => {
    mockRemote((call) => hang(call));
    const { id } = await start({ name: "early-alarm", defaults: FAST, steps: [{ id: "slow", action: { type: "http", url: `${REMOTE}/slow` } }] });
    try {
      await waitForStep(id, "slow", "running");
      const before = await historyOf(id);
      const armed = await alarmOf(id);
      expect(await runDurableObjectAlarm(schedulerStub(id))).toBe(true);
      // Running it twice is just as harmless: the supervisor re-checks state before acting.
      expect(await runDurableObjectAlarm(schedulerStub(id))).toBe(true);
      expect(await historyOf(id)).toEqual(before);
      expect((await api("GET", `/v1/workflows/${id}`)).body.steps[0].attempts).toHaveLength(1);
      const rearmed = await alarmOf(id);
      expect(rearmed).toBeGreaterThanOrEqual(armed!);
    } finally {
      await api("POST", `/v1/workflows/${id}/cancel`);
    }
  });

  it("keeps one alarm, never later than the earliest deadline, moved later only when it fires, and none once the workflow ends", async () => {
    mockRemote((call) => hang(call));
    const { id } = await start({
      name: "alarm-tracking",
      defaults: { ...FAST, timeouts: { scheduleToStartMs: 5_000, startToCloseMs: 60_000, heartbeatMs: 20_000 } },
      steps: [{ id: "slow", action: { type: "http", url: `${REMOTE}/slow` } }],
    });
    try {
    const running = await waitForStep(id, "slow", "running");
    const { scheduledAt, startedAt } = running.steps[0].attempts[0];
    // Armed for schedule-to-start (5 s) at the start; the claim pushed the deadline to the heartbeat's (20 s),
    // and moving an alarm later waits for it to fire.
    const armed = await alarmOf(id);
    expect(armed).toBe(scheduledAt + 5_000);
    expect(await runDurableObjectAlarm(schedulerStub(id))).toBe(true);
    const rearmed = await alarmOf(id);
    // The heartbeat deadline (20 s) comes before start-to-close (60 s); heartbeats only push it later.
    expect(rearmed).toBeGreaterThanOrEqual(startedAt + 20_000);
    expect(rearmed).toBeLessThan(startedAt + 60_000);
    } finally {
      await api("POST", `/v1/workflows/${id}/cancel`);
    }
    await waitForStatus(id, "cancelled");
    expect(await alarmOf(id)).toBeNull();
  });
});

function claimedAt(workflow: { steps: { attempts: { startedAt?: number }[] }[] }): number {
  return workflow.steps[0]!.attempts[0]!.startedAt ?? 0;
}
