import { afterEach, describe, expect, it, vi } from "vitest";
import { start, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";

afterEach(() => vi.restoreAllMocks());

describe("steps as a graph", () => {
  it("dispatches parallel branches together and joins them before the fan-in step", async () => {
    // The two branches only answer once both have arrived: this completes only if they run side by side.
    let arrived = 0;
    let release!: () => void;
    const bothArrived = new Promise<void>((resolve) => (release = resolve));
    const remote = mockRemote(async (call) => {
      const path = new URL(call.url).pathname;
      if (path === "/left" || path === "/right") {
        if (++arrived === 2) release();
        await bothArrived;
        return json({ side: path.slice(1) });
      }
      return json({ path, body: call.body });
    });
    const definition = {
      name: "fan-out-fan-in",
      defaults: FAST,
      steps: [
        { id: "split", action: { type: "http", url: `${REMOTE}/split` } },
        { id: "left", dependsOn: ["split"], action: { type: "http", url: `${REMOTE}/left` } },
        { id: "right", dependsOn: ["split"], action: { type: "http", url: `${REMOTE}/right` } },
        {
          id: "join",
          dependsOn: ["left", "right"],
          action: { type: "http", url: `${REMOTE}/join`, body: { left: "{{ steps.left.output.side }}", right: "{{ steps.right.output.side }}" } },
        },
      ],
    };
    const { id } = await start(definition);
    const workflow = await waitForStatus(id, "completed");

    expect(workflow.output.join.body).toEqual({ left: "left", right: "right" });
    const order = remote.calls.map((call) => new URL(call.url).pathname);
    expect(order[0]).toBe("/split");
    expect(order.slice(1, 3).sort()).toEqual(["/left", "/right"]);
    expect(order[3]).toBe("/join");
  });

  it("runs steps without dependsOn in list order", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const { id } = await start({
      name: "sequence",
      defaults: FAST,
      steps: ["one", "two", "three"].map((step) => ({ id: step, action: { type: "http", url: `${REMOTE}/${step}` } })),
    });
    await waitForStatus(id, "completed");
    expect(remote.calls.map((call) => new URL(call.url).pathname)).toEqual(["/one", "/two", "/three"]);
  });
});

describe("a wide fan-out", () => {
  it("dispatches 150 parallel steps, more than one queue batch holds, and completes them all", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const steps = Array.from({ length: 150 }, (_, i) => ({ id: `s${i}`, dependsOn: [], action: { type: "http", url: `${REMOTE}/s${i}` } }));
    const { id } = await start({ name: "fan-out", defaults: FAST, steps });
    const workflow = await waitForStatus(id, "completed", 30_000);
    expect(workflow.steps.every((step: { attempts: unknown[] }) => step.attempts.length === 1)).toBe(true);
    expect(new Set(remote.calls.map((call) => call.headers["idempotency-key"])).size).toBe(150);
  }, 40_000);
});
