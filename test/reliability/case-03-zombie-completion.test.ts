import { afterEach, describe, expect, it, vi } from "vitest";
import { getWorkflow, historyOf, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { PATIENT } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { objectRecord, schedulerStub } from "../helpers/scheduler";
import { callTask } from "../helpers/tasks";
import { elapse } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

/** Everything a late report could disturb: the object's state, its history, the index, the remote and the queue. */
async function snapshot(id: string, remote: { calls: unknown[] }, sends: { sent: unknown[] }) {
  return {
    workflow: await getWorkflow(id),
    stored: await objectRecord(id),
    history: await historyOf(id),
    index: await indexRow(id),
    remoteCalls: remote.calls.length,
    queueSends: sends.sent.length,
  };
}

describe("case 3: zombie completion", () => {
  it("refuses attempt 1's completion after attempt 2 was dispatched (409 stale_attempt): state, index and side effects unchanged", async () => {
    // Attempt 1 of "render" takes the job (202) and goes silent; attempt 2 is answered at once.
    const remote = mockRemote((call, n) => (new URL(call.url).pathname === "/render" && n === 1 ? json({ accepted: true }, 202) : json({ rendered: n })));
    const id = uniqueId();
    // Attempt 2 is dispatched (sent) but held from the queue while the zombie reports.
    const sends = watchSends((message) => message.workflowId === id && message.stepId === "render" && message.attempt === 2);
    await start(
      {
        name: "zombie",
        defaults: PATIENT,
        steps: [
          { id: "render", action: { type: "http", url: `${REMOTE}/render` } },
          { id: "ship", action: { type: "http", url: `${REMOTE}/ship` } },
        ],
      },
      { id },
    );
    // Attempt 1 goes silent after its 202: its heartbeat deadline passes, then the retry's backoff.
    await waitForStep(id, "render", "waiting");
    await elapse(id, PATIENT.timeouts.heartbeatMs);
    await elapse(id, PATIENT.retry.initialIntervalMs);
    expect(sends.of(id).map((entry) => entry.message.attempt)).toEqual([1, 2]);
    const zombieToken = remote.calls[0]!.headers["shepherd-task-token"]!;
    const before = await snapshot(id, remote, sends);
    expect(before.workflow.steps[0]).toMatchObject({ status: "scheduled", attempt: 2 });
    expect(before.workflow.steps[0].attempts[0]).toMatchObject({ n: 1, status: "timed_out" });

    // The remote wakes up and reports attempt 1 done (and, for good measure, failed, and heartbeats).
    const complete = await callTask(zombieToken, "complete", { output: { zombie: true } });
    expect(complete).toMatchObject({ status: 409, body: { error: { code: "stale_attempt" } } });
    expect((await callTask(zombieToken, "fail", { error: { message: "zombie", retryable: false } })).status).toBe(409);
    expect((await callTask(zombieToken, "heartbeat", { progress: { zombie: true } })).status).toBe(409);
    // A zombie agent's own report over RPC is refused the same way, and takes no next step with it (eager dispatch).
    const agentReport = await schedulerStub(id).report("render", 1, { type: "succeeded", output: { zombie: true } }, 4);
    expect(agentReport).toMatchObject({ ok: false, code: "stale_attempt" });
    expect(agentReport).not.toHaveProperty("followUps");

    const after = await snapshot(id, remote, sends);
    // Nothing changed: not the state (nor its version), not the index, no remote call, nothing enqueued ("ship" not started).
    expect(after.workflow).toEqual(before.workflow);
    expect(after.stored.workflow!.version).toBe(before.stored.workflow!.version);
    expect(after.stored.alarmAt).toBe(before.stored.alarmAt);
    expect(after.index).toEqual(before.index);
    expect(after.remoteCalls).toBe(before.remoteCalls);
    expect(after.queueSends).toBe(before.queueSends);
    // Only the refusals were noted.
    expect(after.history.slice(0, before.history.length)).toEqual(before.history);
    expect(after.history.slice(before.history.length).map((event) => [event.type, event.attempt, event.data?.report])).toEqual([
      ["stale_report_rejected", 1, "complete"],
      ["stale_report_rejected", 1, "fail"],
      ["stale_report_rejected", 1, "heartbeat"],
      ["stale_report_rejected", 1, "complete"],
    ]);

    // Attempt 2 decides the step; one effect each for render (attempt 2's answer) and ship.
    await sends.release();
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output).toEqual({ render: { rendered: 2 }, ship: { rendered: 1 } });
    expect(remote.requestsFor(`${id}:render`)).toBe(2);
    expect(remote.requestsFor(`${id}:ship`)).toBe(1);
  });

  it("answers a zombie completion after the step ended with 410 gone, changing nothing", async () => {
    const remote = mockRemote((call, n) => (n === 1 ? json({ accepted: true }, 202) : json({ rendered: n })));
    const id = uniqueId();
    const sends = watchSends();
    await start({ name: "zombie-late", defaults: PATIENT, steps: [{ id: "render", action: { type: "http", url: `${REMOTE}/render` } }] }, { id });
    // Attempt 1 goes silent after its 202 and times out; attempt 2 completes the step.
    await waitForStep(id, "render", "waiting");
    await elapse(id, PATIENT.timeouts.heartbeatMs);
    await elapse(id, PATIENT.retry.initialIntervalMs);
    await waitForStatus(id, "completed");
    await vi.waitFor(async () => expect((await indexRow(id))?.status).toBe("completed"));
    const zombieToken = remote.calls[0]!.headers["shepherd-task-token"]!;
    const before = await snapshot(id, remote, sends);

    const late = await callTask(zombieToken, "complete", { output: { zombie: true } });
    expect(late).toMatchObject({ status: 410, body: { error: { code: "gone" } } });

    expect(await snapshot(id, remote, sends)).toEqual(before);
    expect(before.workflow.output).toEqual({ render: { rendered: 2 } });
  });
});
