import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { historyOf, start, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";
import { uniqueIdsOnOneQueue, watchDeliveries, watchSends } from "../helpers/queue";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

describe("case 6: consumer throws mid-batch", () => {
  it("acks messages 1–7 and 9–10 before passing the crash on message 8, performs the redelivered 8th, and runs every step once", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    // All on one task queue, so that their messages can arrive as one batch.
    const ids = uniqueIdsOnOneQueue(10, "batch");
    const batchIds = new Set(ids);
    // The starts' messages are kept back, to go to the real queue together, as one batch of ten.
    const sends = watchSends((message) => batchIds.has(message.workflowId));
    for (const id of ids) {
      await start({ name: "batch", defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });
    }
    const queue = watchDeliveries();
    // The consumer crashes on the 8th message of the batch.
    injectFault("consumerThrows", { probability: 1, times: 1, skip: 7 });
    await sends.release();

    for (const id of ids) await waitForStatus(id, "completed");
    expect(timesFired("consumerThrows")).toBe(1);

    // The ten arrived as one batch, in order; the consumer answered every message but the 8th before the crash.
    // The ten arrived as one batch, in order. Before passing the crash on, the consumer acked every message but
    // the 8th, so the platform sends back only that one.
    const firstBatch = queue.deliveries.filter((delivery) => delivery.batch === queue.deliveries[0]!.batch);
    expect(firstBatch.map((delivery) => delivery.body.workflowId)).toEqual(ids);
    expect(firstBatch.map((delivery) => delivery.answer ?? "none")).toEqual(["ack", "ack", "ack", "ack", "ack", "ack", "ack", "none", "ack", "ack"]);
    // The 8th came back (same message, second attempt), was claimed and acked.
    const crashedOn = firstBatch[7]!;
    expect(queue.of(ids[7]!)).toEqual([crashedOn, expect.objectContaining({ id: crashedOn.id, attempts: 2, answer: "ack" })]);
    // Miniflare's queue ignores the explicit acks of an invocation that threw and delivers its whole batch again
    // (Cloudflare's does not); any such copy of a message already acked must be acked again, never performed.
    await vi.waitFor(() => {
      for (const id of ids.filter((_, i) => i !== 7)) {
        const [, again, ...more] = queue.of(id);
        expect(more, id).toEqual([]);
        if (again) expect(again, id).toMatchObject({ attempts: 2, answer: "ack" });
      }
    });

    // Every step ran exactly once.
    for (const id of ids) {
      expect(remote.requestsFor(`${id}:only`), id).toBe(1);
      const started = (await historyOf(id)).filter((event) => event.type === "step_started");
      expect(started, id).toHaveLength(1);
    }
  });
});
