import { afterEach, describe, expect, it, vi } from "vitest";
import { historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { hang, json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../engine/fixtures";

afterEach(() => vi.restoreAllMocks());

describe("case 10: ambiguous outcome (ExecuteAndTimeout)", () => {
  it("retries with the same idempotency key after the remote applied the effect and then hung: two requests, one effect", async () => {
    // An idempotent remote: the first request with a key applies the effect; later ones get the stored answer.
    const applied = new Map<string, { chargeId: string }>();
    const remote = mockRemote((call, n) => {
      const key = call.headers["idempotency-key"]!;
      if (!applied.has(key)) applied.set(key, { chargeId: `ch_${applied.size + 1}` });
      // The first time, the effect happens and then the answer never comes (ExecuteAndTimeout).
      return n === 1 ? hang(call) : json(applied.get(key));
    });
    const id = uniqueId();
    await start(
      { name: "ambiguous", defaults: { ...FAST, timeouts: { ...FAST.timeouts, startToCloseMs: 300, heartbeatMs: 150 } }, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }] },
      { id },
    );
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    expect(workflow.steps[0].output).toEqual({ chargeId: "ch_1" });
    expect(remote.calls.map((call) => call.headers["idempotency-key"])).toEqual([`${id}:charge`, `${id}:charge`]);
    expect(applied.size).toBe(1);
    expect((await historyOf(id)).find((event) => event.type === "step_timed_out")).toMatchObject({ attempt: 1, data: { timeout: "start_to_close" } });
  });
});
