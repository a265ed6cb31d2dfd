import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault } from "../../src/dev/faults";
import { getWorkflow, historyOf, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST, PATIENT } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { objectRecord, schedulerStub } from "../helpers/scheduler";
import { callTask, tokenClaims } from "../helpers/tasks";
import { elapse } from "../helpers/time";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

describe("case 1: agent crash", () => {
  it("times out the attempt whose agent died after claiming it, at the heartbeat deadline, and retries it with a new token after backoff", async () => {
    const remote = mockRemote(() => json({ charged: true }));
    // The first agent to claim an attempt dies silently: no request, no heartbeat, no report.
    injectFault("agentDiesAfterClaim", { probability: 1, times: 1 });
    const { heartbeatMs } = PATIENT.timeouts;
    const backoffMs = PATIENT.retry.initialIntervalMs;
    const id = uniqueId();
    await start({ name: "agent-crash", defaults: PATIENT, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }] }, { id });
    await waitForStep(id, "charge", "running");

    // Nothing is heard from the claimed attempt: its heartbeat deadline passes, then the retry's backoff.
    await elapse(id, heartbeatMs);
    await elapse(id, backoffMs);
    const workflow = await waitForStatus(id, "completed");
    const [first, second] = workflow.steps[0].attempts;
    expect([first.status, second.status]).toEqual(["timed_out", "succeeded"]);
    expect(first.error).toMatchObject({ timeout: "heartbeat", retryable: true });
    // The retry waited out its backoff after the timeout.
    expect(second.scheduledAt - first.endedAt).toBeGreaterThanOrEqual(backoffMs);

    const history = await historyOf(id);
    const missed = history.find((event) => event.type === "step_heartbeat_missed")!;
    expect(missed).toMatchObject({ stepId: "charge", attempt: 1 });
    expect(missed.data.overdueMs).toBeLessThan(1_000);
    expect(history.map((event) => event.type)).toContain("step_retry_scheduled");

    // One request reached the remote (from attempt 2), carrying attempt 2's own token.
    expect(remote.calls).toHaveLength(1);
    expect(remote.calls[0]!.headers["shepherd-attempt"]).toBe("2");
    const [payload] = remote.calls[0]!.headers["shepherd-task-token"]!.split(".");
    // Minted at the claim, so it also carries its expiry (the attempt's start-to-close deadline plus a grace).
    expect(JSON.parse(atob(payload!.replace(/-/g, "+").replace(/_/g, "/")))).toEqual(["default", id, "charge", 2, expect.any(Number)]);

    // The index follows: the workflow is listed with its final status.
    await vi.waitFor(async () => expect((await indexRow(id))?.status).toBe("completed"));
  });

  // Real time: this one shows the runtime's own alarm firing at the deadlines the object set (so they are short).
  it("marks a claimed attempt timed out when the real alarm fires at its heartbeat deadline, enqueues attempt 2 with a new token only after the backoff, and keeps D1 in step", async () => {
    const heartbeatMs = 150;
    const backoffMs = 400;
    const remote = mockRemote(() => json({ charged: true }));
    const id = uniqueId();
    // Every message of this workflow is kept from the queue, so no agent runs until the test says so.
    const sends = watchSends((message) => message.workflowId === id);
    await start(
      {
        name: "agent-crash-seeded",
        defaults: { ...FAST, retry: { ...FAST.retry, initialIntervalMs: backoffMs, maxIntervalMs: backoffMs }, timeouts: { ...FAST.timeouts, heartbeatMs } },
        steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }],
      },
      { id },
    );
    expect(sends.of(id).map((entry) => entry.message.attempt)).toEqual([1]);
    const firstToken = sends.of(id)[0]!.message.token;
    expect((await indexRow(id))?.status).toBe("running");

    // The consumer takes the step (claims attempt 1), then crashes: it never heartbeats or reports.
    const claim = await schedulerStub(id).claim("charge", 1);
    expect(claim).toMatchObject({ ok: true, task: { attempt: 1, heartbeatMs } });
    const startedAt: number = (await getWorkflow(id)).steps[0].attempts[0].startedAt;
    // The supervisor's alarm was moved to the heartbeat deadline at once.
    expect((await objectRecord(id)).alarmAt).toBe(startedAt + heartbeatMs);

    // The real alarm fires at that deadline and times the attempt out.
    const retrying = await waitForStep(id, "charge", "retrying", 5_000);
    const step = retrying.steps[0];
    expect(step.attempts).toHaveLength(1);
    expect(step.attempts[0]).toMatchObject({ n: 1, status: "timed_out", error: { timeout: "heartbeat", retryable: true } });
    const timedOutAt: number = step.attempts[0].endedAt;
    expect(step.nextRetryAt).toBe(timedOutAt + backoffMs);
    // Attempt 2 is not enqueued yet: it waits out its backoff, for which the alarm is now set.
    expect(sends.of(id)).toHaveLength(1);
    expect((await objectRecord(id)).alarmAt).toBe(timedOutAt + backoffMs);

    const missed = (await historyOf(id)).find((event) => event.type === "step_heartbeat_missed")!;
    expect(missed).toMatchObject({ stepId: "charge", attempt: 1, data: { timeout: "heartbeat", deadlineAt: startedAt + heartbeatMs } });
    expect(missed.at).toBeGreaterThanOrEqual(startedAt + heartbeatMs);
    expect(missed.data.overdueMs).toBeLessThan(1_000);

    // After the backoff the alarm enqueues attempt 2, with a token of its own.
    const retry = await vi.waitFor(
      () => {
        const entry = sends.of(id)[1];
        expect(entry).toBeDefined();
        return entry!;
      },
      { timeout: 5_000, interval: 10 },
    );
    expect(sends.of(id)).toHaveLength(2);
    expect(retry.at).toBeGreaterThanOrEqual(timedOutAt + backoffMs);
    expect(retry.message).toMatchObject({ tenant: "default", workflowId: id, stepId: "charge", attempt: 2, kind: "action" });
    expect(retry.message.token).not.toBe(firstToken);
    expect(await tokenClaims(retry.message.token)).toEqual({ tenant: "default", workflowId: id, stepId: "charge", attempt: 2 });
    // The dead agent's token no longer counts.
    expect((await callTask(firstToken, "complete", { output: { late: true } })).status).toBe(409);
    // The index still agrees with the object: the status did not change, so the entry was not rewritten.
    expect((await indexRow(id))?.status).toBe((await objectRecord(id)).workflow!.status);

    // Attempt 2 reaches a live agent and succeeds; the index takes the object's final status and version.
    await sends.release((message) => message.attempt === 2);
    const done = await waitForStatus(id, "completed");
    expect(done.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    expect(remote.calls).toHaveLength(1);
    // The remote gets the token minted at the claim: attempt 2's claims, and an expiry.
    expect(await tokenClaims(remote.calls[0]!.headers["shepherd-task-token"]!)).toEqual({
      tenant: "default",
      workflowId: id,
      stepId: "charge",
      attempt: 2,
      expiresAt: expect.any(Number),
    });
    const stored = (await objectRecord(id)).workflow!;
    await vi.waitFor(async () =>
      expect(await indexRow(id)).toMatchObject({ status: "completed", version: stored.version, updated_at: done.updatedAt, ended_at: done.endedAt, next_deadline_at: null }),
    );
  });
});
