import { afterEach, describe, expect, it, vi } from "vitest";
import { getWorkflow, start, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { FAST, PATIENT } from "../helpers/policies";
import { holdBackSends } from "../helpers/queue";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { alarmOf } from "../helpers/scheduler";
import { backdate, elapse, fireAlarm, runCron } from "../helpers/time";
import { INDEX_LEASE_MS } from "../../src/domain/machine/index-entry";
import { SEND_LEASE_MS } from "../../src/workflow/delivery-policy";
import { callTask } from "../helpers/tasks";
import { loseAlarm, strandedDefinition } from "../helpers/stranded";

afterEach(() => vi.restoreAllMocks());

/** The default grace period (SWEEP_GRACE_MS is not set in the tests). */
const GRACE_MS = 60_000;

/** The stranded workflow's schedule-to-start: long, so only moved time passes it. */
const SCHEDULE_TO_START_MS = 20_000;

/** A workflow whose first message is lost and whose alarm is then deleted: nothing would ever move it again. */
async function strandedWorkflow() {
  const remote = mockRemote(() => json({ ok: true }));
  const id = uniqueId();
  holdBackSends(id);
  await start(strandedDefinition(SCHEDULE_TO_START_MS), { id });
  await vi.waitFor(async () => expect((await indexRow(id))?.next_deadline_at).toEqual(expect.any(Number)));
  await loseAlarm(id);
  return { id, remote };
}

describe("the cron sweep (the supervisor's safety net)", () => {
  it("case 16 (lost alarm): wakes a workflow whose alarm was deleted once its indexed deadline is past the grace period", async () => {
    const { id, remote } = await strandedWorkflow();
    // A lease later (well past the schedule-to-start deadline) nothing happened: the alarm is gone.
    await backdate(id, { ms: INDEX_LEASE_MS });
    expect((await getWorkflow(id)).steps[0].attempts).toHaveLength(1);
    expect(await alarmOf(id)).toBeNull();

    await runCron(Date.now() + GRACE_MS + 1_000);

    // Woken, it timed attempt 1 out and set its alarm again, for the retry's backoff.
    await elapse(id, PATIENT.retry.initialIntervalMs);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
    await vi.waitFor(async () => expect((await indexRow(id))?.status).toBe("completed"));
  });

  it("leaves a workflow alone while its lease lapsed less than the grace period ago", async () => {
    const { id } = await strandedWorkflow();
    await backdate(id, { ms: INDEX_LEASE_MS });
    await runCron(Date.now());
    expect((await getWorkflow(id)).steps[0].attempts).toHaveLength(1);
    expect((await getWorkflow(id)).steps[0].attempts[0].status).toBe("scheduled");
    expect(await alarmOf(id)).toBeNull();
  });

  it("sets the alarm of a woken workflow again and refreshes its indexed deadline", async () => {
    mockRemote(() => json({}, 202));
    const id = uniqueId();
    const heartbeatMs = 60_000;
    await start({ name: "waiting", defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs, startToCloseMs: 600_000 } }, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });
    await vi.waitFor(async () => expect((await getWorkflow(id)).steps[0].status).toBe("waiting"));
    const indexedAtStart = (await indexRow(id))!.next_deadline_at!;
    await loseAlarm(id);

    // Its lease from the start lapses, and the grace period with it: the sweep wakes it.
    expect(indexedAtStart).toBeGreaterThanOrEqual((await getWorkflow(id)).createdAt + INDEX_LEASE_MS);
    const wokenAt = Date.now();
    await runCron(indexedAtStart + GRACE_MS + 1);

    // Set again: first a lease on, for its index write (the heartbeat deadline is further off); that alarm finds
    // nothing due and sets the heartbeat deadline.
    const workflow = await getWorkflow(id);
    const heartbeatDeadline = workflow.steps[0].lastHeartbeatAt + heartbeatMs;
    expect(await alarmOf(id)).toBeLessThanOrEqual(Math.min(heartbeatDeadline, Date.now() + SEND_LEASE_MS));
    expect(await fireAlarm(id)).toBe(true);
    const alarm = await alarmOf(id);
    expect(alarm).toBe(heartbeatDeadline);
    // Indexed a lease ahead rather than at the (near) heartbeat deadline: the alarm was just set again.
    await vi.waitFor(async () => expect((await indexRow(id))?.next_deadline_at).toBeGreaterThanOrEqual(wokenAt + INDEX_LEASE_MS));
    expect((await indexRow(id))!.next_deadline_at!).toBeGreaterThan(alarm!);
    expect(workflow.status).toBe("running");
  });

  it("never wakes a healthy workflow: one whose heartbeats keep coming renews its lease before it lapses", async () => {
    const remote = mockRemote(() => json({}, 202));
    const id = uniqueId();
    await start({ name: "heartbeating", defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 120_000, startToCloseMs: 3_600_000 } }, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });
    await vi.waitFor(async () => expect((await getWorkflow(id)).steps[0].status).toBe("waiting"));
    const token = remote.calls[0]!.headers["shepherd-task-token"]!;
    const wakes = vi.spyOn(console, "log");
    const woken = () => wakes.mock.calls.filter(([line]) => String(line).includes("sweep woke overdue workflows")).length;

    // Half an hour, a minute at a time: a heartbeat each minute, and a sweep after each.
    for (let minute = 1; minute <= 30; minute++) {
      await backdate(id, { ms: 60_000 });
      expect((await callTask(token, "heartbeat", {})).status).toBe(200);
      await runCron(Date.now());
    }
    expect(woken()).toBe(0);
    // Renewed once per half lease or so, not by every heartbeat: the indexed lease stays ahead.
    await vi.waitFor(async () => expect((await indexRow(id))?.next_deadline_at).toBeGreaterThan(Date.now() + INDEX_LEASE_MS / 2));
    expect((await getWorkflow(id)).status).toBe("running");
  });

  it("wakes a workflow whose object stopped running once its lease lapsed, and only once per lease", async () => {
    mockRemote(() => json({}, 202));
    const id = uniqueId();
    await start({ name: "silent", defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 60_000, startToCloseMs: 3_600_000 } }, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });
    await vi.waitFor(async () => expect((await getWorkflow(id)).steps[0].status).toBe("waiting"));
    const indexedAtStart = (await indexRow(id))!.next_deadline_at!;
    const wakes = vi.spyOn(console, "log");
    const woken = () => wakes.mock.calls.filter(([line]) => String(line).includes("sweep woke overdue workflows")).length;

    await runCron(indexedAtStart + GRACE_MS + 1);
    expect(woken()).toBe(1);
    // The wake renewed its lease: the sweeps of the next minutes find nothing overdue.
    for (const minutes of [2, 3, 5, 9]) await runCron(Date.now() + minutes * 60_000);
    expect(woken()).toBe(1);
    expect((await getWorkflow(id)).status).toBe("running");
  });
});
