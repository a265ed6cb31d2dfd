import { afterEach, describe, expect, it, vi } from "vitest";
import { historyOf, start, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { hang, json, mockRemote, REMOTE, type RemoteCall } from "../helpers/remote";

afterEach(() => vi.restoreAllMocks());

/**
 * A payment service whose charges land but whose answers may be lost (ExecuteAndTimeout): it applies the
 * charge, then hangs the first answer. GET /charges/{key} says whether a charge with that key exists.
 */
function paymentService(options: { effectLands: boolean }) {
  const charged = new Map<string, { id: string }>();
  return mockRemote((call: RemoteCall, n) => {
    const key = call.headers["idempotency-key"]!;
    if (call.method === "GET") {
      const charge = charged.get(key);
      return charge ? json(charge) : json({ error: "no such charge" }, 404);
    }
    if (!charged.has(key) && (options.effectLands || n > 1)) charged.set(key, { id: `ch_${charged.size + 1}` });
    return n === 1 ? hang(call) : json(charged.get(key));
  });
}

// Real time: the first attempt hangs until its short start-to-close deadline passes.
const definition = (name: string) => ({
  name,
  defaults: { ...FAST, timeouts: { startToCloseMs: 400, heartbeatMs: 150 } },
  steps: [
    {
      id: "charge",
      action: { type: "http", url: `${REMOTE}/charges`, body: { amount: 42 } },
      verify: { type: "http", url: `${REMOTE}/charges/{{ workflow.id }}` },
    },
  ],
});

describe("verify before retry (a step's `verify`)", () => {
  it("finds the effect of an attempt whose answer was lost: the step succeeds with the verify answer and the action is not sent again", async () => {
    const remote = paymentService({ effectLands: true });
    const { id } = await start(definition("verified-charge"));
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output).toEqual({ charge: { id: "ch_1" } });
    const posts = remote.calls.filter((call) => call.method === "POST");
    const gets = remote.calls.filter((call) => call.method === "GET");
    expect(posts).toHaveLength(1);
    expect(gets).toHaveLength(1);
    // Sent with the step's own Idempotency-Key, to the rendered url, as a GET (verify's default method).
    expect(gets[0]!.headers["idempotency-key"]).toBe(`${id}:charge`);
    expect(new URL(gets[0]!.url).pathname).toBe(`/charges/${id}`);
    const types = (await historyOf(id)).map((event) => event.type);
    expect(types).toEqual(expect.arrayContaining(["step_timed_out", "step_verified", "step_succeeded"]));
    expect(workflow.steps[0].attempts.map((a: { status: string }) => a.status)).toEqual(["timed_out", "succeeded"]);
  });

  it("sends the action again when verify answers 404: the earlier attempt did not land", async () => {
    const remote = paymentService({ effectLands: false });
    const { id } = await start(definition("unverified-charge"));
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output).toEqual({ charge: { id: "ch_1" } });
    expect(remote.calls.map((call) => call.method)).toEqual(["POST", "GET", "POST"]);
    expect((await historyOf(id)).map((event) => event.type)).not.toContain("step_verified");
  });

  it("does not verify before a retry of an attempt the remote answered (a 503 says it did not take effect)", async () => {
    const remote = mockRemote((_call, n) => (n === 1 ? json({ error: "busy" }, 503) : json({ id: "ch_1" })));
    const { id } = await start(definition("answered-charge"));
    await waitForStatus(id, "completed");
    expect(remote.calls.map((call) => call.method)).toEqual(["POST", "POST"]);
  });
});
