import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../engine/fixtures";
import { storedWorkflow, watchDeliveries, type Delivery } from "./helpers";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

// wrangler.toml: max_retries = 3, so a message that always fails is delivered 4 times, then dead-lettered.
const DELIVERIES = 4;

const poisonStep = { id: "only", action: { type: "http", url: `${REMOTE}/only` } };

/** The task queue delivered the message 4 times (attempts 1–4, never answered), then the DLQ once, acked. */
function expectDeadLettered(deliveries: Delivery[]) {
  const [first] = deliveries;
  expect(deliveries.map((delivery) => [delivery.queue, delivery.id, delivery.attempts, delivery.answer ?? "none"])).toEqual([
    ...Array.from({ length: DELIVERIES }, (_, i) => ["shepherd-tasks", first!.id, i + 1, "none"]),
    ["shepherd-tasks-dlq", expect.any(String), 1, "ack"],
  ]);
  expect(deliveries.at(-1)!.body).toEqual(first!.body);
}

describe("case 7: poison message", () => {
  it("dead-letters a message the consumer always fails on; the DLQ consumer fails the attempt and the retry policy takes over", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const queue = watchDeliveries();
    injectFault("consumerThrows", { probability: 1, times: DELIVERIES });
    const id = uniqueId();
    await start({ name: "poison", defaults: FAST, steps: [poisonStep] }, { id });

    const workflow = await waitForStatus(id, "completed", 30_000);
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["failed", "succeeded"]);
    const dead = (await historyOf(id)).find((event) => event.type === "task_dead_lettered");
    expect(dead).toMatchObject({ stepId: "only", attempt: 1, data: { outcome: "attempt failed" } });
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
    expect(timesFired("consumerThrows")).toBe(DELIVERIES);
    await vi.waitFor(() => {
      const deliveries = queue.of(id);
      expectDeadLettered(deliveries.slice(0, DELIVERIES + 1));
      // Then attempt 2's own message, delivered once.
      expect(deliveries.slice(DELIVERIES + 1).map((delivery) => [delivery.queue, delivery.body.attempt, delivery.answer])).toEqual([["shepherd-tasks", 2, "ack"]]);
    });
    await vi.waitFor(async () => expect(await indexRow(id)).toMatchObject({ status: "completed", version: (await storedWorkflow(id)).version }));
  }, 40_000);

  it("escalates the step in the object and the index when the dead-lettered attempt was its last", async () => {
    mockRemote(() => json({ ok: true }));
    const queue = watchDeliveries();
    injectFault("consumerThrows", { probability: 1, times: DELIVERIES });
    const id = uniqueId();
    await start({ name: "poison", onFailure: "escalate", defaults: { ...FAST, retry: { ...FAST.retry, maxAttempts: 1 } }, steps: [poisonStep] }, { id });
    const workflow = await waitForStatus(id, "needs_attention", 30_000);
    expect(workflow.steps[0]).toMatchObject({ status: "failed", error: { message: expect.stringMatching(/dead-lettered/) } });
    // The DLQ consumer acks once the object has recorded the dead letter, so the ack may trail the status.
    await vi.waitFor(() => expectDeadLettered(queue.of(id)));
    expect((await historyOf(id)).find((event) => event.type === "workflow_escalated")).toMatchObject({ stepId: "only", data: { phase: "action" } });
    await vi.waitFor(async () => expect(await indexRow(id)).toMatchObject({ status: "needs_attention", version: (await storedWorkflow(id)).version }));
  }, 40_000);

  it("fails the workflow in the object and the index when the dead-lettered attempt was its last and onFailure is fail", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const queue = watchDeliveries();
    injectFault("consumerThrows", { probability: 1, times: DELIVERIES });
    const id = uniqueId();
    await start({ name: "poison", onFailure: "fail", defaults: { ...FAST, retry: { ...FAST.retry, maxAttempts: 1 } }, steps: [poisonStep] }, { id });
    const workflow = await waitForStatus(id, "failed", 30_000);
    expect(workflow.steps[0]).toMatchObject({ status: "failed", error: { message: expect.stringMatching(/dead-lettered/), retryable: true } });
    expect(workflow.error.message).toMatch(/step "only" failed/);
    // The DLQ consumer acks once the object has recorded the dead letter, so the ack may trail the status.
    await vi.waitFor(() => expectDeadLettered(queue.of(id)));
    expect(remote.calls).toHaveLength(0);
    await vi.waitFor(async () => expect(await indexRow(id)).toMatchObject({ status: "failed", ended_at: workflow.endedAt, version: (await storedWorkflow(id)).version }));
  }, 40_000);
});
