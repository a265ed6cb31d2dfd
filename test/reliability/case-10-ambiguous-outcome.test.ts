import { afterEach, describe, expect, it, vi } from "vitest";
import { WorkflowScheduler } from "../../src/scheduler/workflow-scheduler";
import { historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { hang, json, mockRemote, REMOTE, type RemoteCall } from "../helpers/remote";
import { FAST } from "../engine/fixtures";
import { tokenClaims, watchSends } from "./helpers";

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

const definition = (startToCloseMs: number) => ({
  name: "ambiguous",
  defaults: { ...FAST, timeouts: { ...FAST.timeouts, startToCloseMs, heartbeatMs: 150 } },
  steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }],
});

describe("case 10: ambiguous outcome (ExecuteAndTimeout)", () => {
  it("retries with the same idempotency key after the remote applied the effect and then hung: two requests, one effect", async () => {
    // The first time, the effect happens and then the answer never comes (ExecuteAndTimeout).
    const { remote, applied } = idempotentRemote((call) => hang(call));
    const id = uniqueId();
    await start(definition(300), { id });
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
    await start(definition(300), { id });

    await vi.waitFor(() => expect(sends.of(id).map((entry) => entry.message.attempt)).toEqual([1, 2]), { timeout: 5_000, interval: 10 });
    answerLate();
    await vi.waitFor(() => expect(reports.mock.calls.filter((args) => args[1] === 1)).toHaveLength(1), { timeout: 5_000, interval: 10 });
    const index = reports.mock.calls.findIndex((args) => args[1] === 1);
    // The agent got the late answer and reported attempt 1 succeeded; the object refused it, as attempt 2 is current.
    expect(reports.mock.calls[index]![2]).toEqual({ type: "succeeded", output: { chargeId: "ch_1" } });
    expect(await reports.mock.results[index]!.value).toMatchObject({ ok: false, code: "stale_attempt" });
    expect((await historyOf(id)).filter((event) => event.type === "stale_report_rejected").at(-1)).toMatchObject({ attempt: 1, data: { currentAttempt: 2 } });

    await sends.release();
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    expect(workflow.steps[0].output).toEqual({ chargeId: "ch_1" });
    expect(remote.calls.map((call) => call.headers["idempotency-key"])).toEqual([`${id}:charge`, `${id}:charge`]);
    expect(applied.size).toBe(1);
  });
});
