import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { holdBackSends } from "../helpers/scheduler";
import { FAST } from "../engine/fixtures";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

describe("case 6: consumer throws mid-batch", () => {
  it("acks the messages it handled, redelivers only the one it crashed on, and runs every step once", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const ids = Array.from({ length: 10 }, () => uniqueId("batch"));
    const held = (await Promise.all(ids.map(async (id) => ({ id, messages: await holdBackSends(id) })))).map((entry) => entry);
    for (const id of ids) {
      await start({ name: "batch", defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });
    }
    // The consumer crashes on the 8th message of the batch.
    injectFault("consumerThrows", { probability: 1, times: 1, skip: 7 });
    // The ten messages go to the real queue together, as one batch.
    await env.TASKS.sendBatch(held.flatMap((entry) => entry.messages).map((body) => ({ body })));

    for (const id of ids) await waitForStatus(id, "completed");
    expect(timesFired("consumerThrows")).toBe(1);
    for (const id of ids) {
      expect(remote.requestsFor(`${id}:only`), id).toBe(1);
      const started = (await historyOf(id)).filter((event) => event.type === "step_started");
      expect(started, id).toHaveLength(1);
    }
  });
});
