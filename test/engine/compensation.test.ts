import { afterEach, describe, expect, it, vi } from "vitest";
import { historyOf, start, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";

afterEach(() => vi.restoreAllMocks());

function step(id: string, options: { compensate?: boolean } = {}) {
  return {
    id,
    action: { type: "http", url: `${REMOTE}/${id}` },
    ...(options.compensate === false ? {} : { compensate: { type: "http", url: `${REMOTE}/undo-${id}`, body: { undo: "{{ steps." + id + ".output.ref }}" } } }),
  };
}

describe("saga compensation", () => {
  it("case 9 (remote 4xx): compensates succeeded steps in reverse order after a permanent 400", async () => {
    const remote = mockRemote((call) => {
      const path = new URL(call.url).pathname;
      if (path === "/ship") return json({ error: "address rejected" }, 400);
      return json({ ref: `${path.slice(1)}-ref` });
    });
    const { id } = await start({
      name: "order",
      defaults: FAST,
      steps: [step("reserve"), step("notify", { compensate: false }), step("charge"), step("ship")],
    });
    const workflow = await waitForStatus(id, "compensated");

    const paths = remote.calls.map((call) => new URL(call.url).pathname);
    expect(paths).toEqual(["/reserve", "/notify", "/charge", "/ship", "/undo-charge", "/undo-reserve"]);
    // A permanent failure is not retried.
    expect(remote.requestsFor(`${id}:ship`)).toBe(1);
    expect(remote.callsTo("/undo-charge")[0]?.headers["idempotency-key"]).toBe(`${id}:charge:compensate`);
    expect(remote.callsTo("/undo-charge")[0]?.body).toEqual({ undo: "charge-ref" });
    expect(workflow.steps.map((s: { status: string }) => s.status)).toEqual(["compensated", "succeeded", "compensated", "failed"]);
    expect(workflow.error.message).toContain("ship");

    const types = (await historyOf(id)).map((event) => event.type);
    expect(types).toContain("compensation_started");
    expect(types.filter((type) => type === "step_compensated")).toHaveLength(2);
    expect(types.at(-1)).toBe("workflow_compensated");
  });

  it("retries a failing compensation under its step's policy", async () => {
    const remote = mockRemote((call, n) => {
      const path = new URL(call.url).pathname;
      if (path === "/ship") return json({ error: "no" }, 422);
      if (path === "/undo-charge" && n === 1) return json({ error: "busy" }, 503);
      return json({ ref: "r" });
    });
    const { id } = await start({ name: "order", defaults: FAST, steps: [step("charge"), step("ship")] });
    const workflow = await waitForStatus(id, "compensated");
    expect(remote.requestsFor(`${id}:charge:compensate`)).toBe(2);
    const compensations = workflow.steps[0].attempts.filter((a: { kind: string }) => a.kind === "compensation");
    expect(compensations.map((a: { status: string }) => a.status)).toEqual(["failed", "succeeded"]);
  });

  it("case 9 (remote 4xx): escalates to needs_attention when a compensation fails for good", async () => {
    mockRemote((call) => {
      const path = new URL(call.url).pathname;
      if (path === "/ship" || path === "/undo-charge") return json({ error: "no" }, 422);
      return json({ ref: "r" });
    });
    const { id } = await start({ name: "order", defaults: FAST, steps: [step("charge"), step("ship")] });
    const workflow = await waitForStatus(id, "needs_attention");
    expect(workflow.steps[0].status).toBe("failed");
    const escalation = (await historyOf(id)).find((event) => event.type === "workflow_escalated");
    expect(escalation?.data.phase).toBe("compensation");
  });

  it("ends failed without compensating when onFailure is fail", async () => {
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/ship" ? json({}, 400) : json({ ref: "r" })));
    const { id } = await start({ name: "order", onFailure: "fail", defaults: FAST, steps: [step("charge"), step("ship")] });
    await waitForStatus(id, "failed");
    expect(remote.callsTo("/undo-charge")).toHaveLength(0);
  });
});
