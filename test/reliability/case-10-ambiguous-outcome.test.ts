import { afterEach, describe, expect, it, vi } from "vitest";
import { WorkflowScheduler } from "../../src/workflow/object";
import { api, historyOf, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { FAST, PATIENT } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { hang, json, mockRemote, REMOTE, type RemoteCall } from "../helpers/remote";
import { tokenClaims } from "../helpers/tasks";
import { elapse } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

/** An idempotent remote: the first request with a key applies the effect; later ones get the stored answer. */
function idempotentRemote(firstAnswer: (call: RemoteCall, stored: { chargeId: string }) => Promise<Response>) {
  const applied = new Map<string, { chargeId: string }>();
  const remote = mockRemote((call, n) => {
    const key = call.headers["idempotency-key"]!;
    if (!applied.has(key)) applied.set(key, { chargeId: `ch_${applied.size + 1}` });
    return n === 1 ? firstAnswer(call, applied.get(key)!) : json(applied.get(key));
  });
  return { remote, applied };
}

const definition = (defaults: unknown) => ({
  name: "ambiguous",
  defaults,
  steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }],
});

/** A start-to-close shorter than the heartbeat timeout, so it is the deadline that passes. */
const START_TO_CLOSE_MS = 20_000;

describe("case 10: ambiguous outcome (ExecuteAndTimeout)", () => {
  // Real time: the agent's own heartbeats (every 50 ms here) tell it the attempt timed out, so it aborts the hung
  // request; the deadlines are short rather than moved.
  it("retries with the same idempotency key after the remote applied the effect and then hung: two requests, one effect", async () => {
    // The first time, the effect happens and then the answer never comes (ExecuteAndTimeout).
    const { remote, applied } = idempotentRemote((call) => hang(call));
    const id = uniqueId();
    await start(definition({ ...FAST, timeouts: { ...FAST.timeouts, startToCloseMs: 300, heartbeatMs: 150 } }), { id });
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    expect(workflow.steps[0].output).toEqual({ chargeId: "ch_1" });
    expect(remote.calls.map((call) => call.headers["idempotency-key"])).toEqual([`${id}:charge`, `${id}:charge`]);
    expect(applied.size).toBe(1);
    expect((await historyOf(id)).find((event) => event.type === "step_timed_out")).toMatchObject({ attempt: 1, data: { timeout: "start_to_close" } });
    // Two distinct attempts, each with its own token, sharing the one key; the hung request was given up.
    expect(remote.calls.map((call) => call.headers["shepherd-attempt"])).toEqual(["1", "2"]);
    const claims = await Promise.all(remote.calls.map((call) => tokenClaims(call.headers["shepherd-task-token"]!)));
    expect(claims.map((claim) => claim?.attempt)).toEqual([1, 2]);
    expect(remote.calls[0]!.signal?.aborted).toBe(true);
  });

  it("refuses attempt 1's answer when it arrives after the timeout; the retry with the same key gets the stored result: two requests, one effect", async () => {
    let answerLate!: () => void;
    const late = new Promise<void>((resolve) => (answerLate = resolve));
    // The effect happens, and the answer comes only once the attempt has timed out and its retry was dispatched.
    const { remote, applied } = idempotentRemote(async (_call, stored) => {
      await late;
      return json(stored);
    });
    const reports = vi.spyOn(WorkflowScheduler.prototype, "report");
    const id = uniqueId();
    const sends = watchSends((message) => message.workflowId === id && message.attempt === 2);
    await start(definition({ ...PATIENT, timeouts: { ...PATIENT.timeouts, startToCloseMs: START_TO_CLOSE_MS } }), { id });

    // Attempt 1's request is under way; its start-to-close passes, then the retry's backoff.
    await waitForStep(id, "charge", "running");
    await elapse(id, START_TO_CLOSE_MS);
    await elapse(id, PATIENT.retry.initialIntervalMs);
    expect(sends.of(id).map((entry) => entry.message.attempt)).toEqual([1, 2]);
    answerLate();
    await vi.waitFor(() => expect(reports.mock.calls.filter((args) => args[1] === 1)).toHaveLength(1), { timeout: 5_000, interval: 10 });
    const index = reports.mock.calls.findIndex((args) => args[1] === 1);
    // The agent got the late answer and reported attempt 1 succeeded; the object refused it, as attempt 2 is current.
    expect(reports.mock.calls[index]![2]).toMatchObject({ type: "succeeded", output: { chargeId: "ch_1" }, status: 200, exchange: { response: { status: 200 } } });
    expect(await reports.mock.results[index]!.value).toMatchObject({ ok: false, code: "stale_attempt" });
    // A refused report writes no step row, so what that attempt sent and got back is not kept.
    expect((await api("GET", `/v1/workflows/${id}/steps/charge/attempts/1`)).body).not.toHaveProperty("response");
    expect((await historyOf(id)).filter((event) => event.type === "stale_report_rejected").at(-1)).toMatchObject({ attempt: 1, data: { currentAttempt: 2 } });

    await sends.release();
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    expect(workflow.steps[0].output).toEqual({ chargeId: "ch_1" });
    expect(remote.calls.map((call) => call.headers["idempotency-key"])).toEqual([`${id}:charge`, `${id}:charge`]);
    expect(applied.size).toBe(1);
  });
});
