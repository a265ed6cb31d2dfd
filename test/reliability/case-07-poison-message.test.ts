import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";
import { MAX_REDISPATCHES } from "../../src/domain/machine/reports";
import { taskQueueNameOf, watchDeliveries, type Delivery } from "../helpers/queue";
import { objectRecord } from "../helpers/scheduler";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

// wrangler.toml: max_retries = 3, so a message that always fails is delivered 4 times, then dead-lettered.
const DELIVERIES = 4;

const poisonStep = { id: "only", action: { type: "http", url: `${REMOTE}/only` } };

/** A message dead-letters this many times before its attempt fails: the first ones are sent again. */
const DEAD_LETTERS = MAX_REDISPATCHES + 1;

/** The workflow's task queue delivered the message 4 times (attempts 1–4, never answered), then the DLQ once, acked. */
function expectDeadLettered(deliveries: Delivery[]) {
  const [first] = deliveries;
  expect(deliveries.map((delivery) => [delivery.queue, delivery.id, delivery.attempts, delivery.answer ?? "none"])).toEqual([
    ...Array.from({ length: DELIVERIES }, (_, i) => [taskQueueNameOf(first!.body.workflowId), first!.id, i + 1, "none"]),
    ["shepherd-tasks-dlq", expect.any(String), 1, "ack"],
  ]);
  expect(deliveries.at(-1)!.body).toEqual(first!.body);
}

describe("case 7: poison message", () => {
  it("dead-letters a message the consumer always fails on; the DLQ consumer has the object send the attempt again, using no attempt", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const queue = watchDeliveries();
    injectFault("consumerThrows", { probability: 1, times: DELIVERIES });
    const id = uniqueId();
    await start({ name: "poison", defaults: FAST, steps: [poisonStep] }, { id });

    const workflow = await waitForStatus(id, "completed", 30_000);
    expect(workflow.steps[0].attempts.map((attempt: { n: number; status: string }) => [attempt.n, attempt.status])).toEqual([[1, "succeeded"]]);
    const dead = (await historyOf(id)).find((event) => event.type === "task_dead_lettered");
    expect(dead).toMatchObject({ stepId: "only", attempt: 1, data: { outcome: "re-dispatched", deadLetters: 1 } });
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
    expect(timesFired("consumerThrows")).toBe(DELIVERIES);
    await vi.waitFor(() => {
      const deliveries = queue.of(id);
      expectDeadLettered(deliveries.slice(0, DELIVERIES + 1));
      // Then attempt 1's message once more, sent again by the object, delivered once.
      expect(deliveries.slice(DELIVERIES + 1).map((delivery) => [delivery.queue, delivery.body.attempt, delivery.answer])).toEqual([[taskQueueNameOf(id), 1, "ack"]]);
    });
    await vi.waitFor(async () => expect(await indexRow(id)).toMatchObject({ status: "completed", version: (await objectRecord(id)).workflow!.version }));
  }, 40_000);

  it(`fails a poison attempt once its message dead-letters ${DEAD_LETTERS} times, and the retry policy takes over`, async () => {
    const remote = mockRemote(() => json({ ok: true }));
    injectFault("consumerThrows", { probability: 1, times: DELIVERIES * DEAD_LETTERS });
    const id = uniqueId();
    await start({ name: "poison", defaults: FAST, steps: [poisonStep] }, { id });

    const workflow = await waitForStatus(id, "completed", 60_000);
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["failed", "succeeded"]);
    const outcomes = (await historyOf(id)).filter((event) => event.type === "task_dead_lettered").map((event) => event.data.outcome);
    expect(outcomes).toEqual([...Array.from({ length: MAX_REDISPATCHES }, () => "re-dispatched"), "attempt failed"]);
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
  }, 70_000);

  it("escalates the step in the object and the index when the poison attempt was its last", async () => {
    mockRemote(() => json({ ok: true }));
    const queue = watchDeliveries();
    injectFault("consumerThrows", { probability: 1, times: DELIVERIES * DEAD_LETTERS });
    const id = uniqueId();
    await start({ name: "poison", onFailure: "escalate", defaults: { ...FAST, retry: { ...FAST.retry, maxAttempts: 1 } }, steps: [poisonStep] }, { id });
    const workflow = await waitForStatus(id, "needs_attention", 60_000);
    expect(workflow.steps[0]).toMatchObject({ status: "failed", error: { message: expect.stringMatching(/dead-lettered/) } });
    // The DLQ consumer acks once the object has recorded the dead letter, so the ack may trail the status.
    await vi.waitFor(() => expect(queue.of(id).filter((delivery) => delivery.queue === "shepherd-tasks-dlq" && delivery.answer === "ack")).toHaveLength(DEAD_LETTERS));
    expect(queue.of(id).filter((delivery) => delivery.queue === taskQueueNameOf(id))).toHaveLength(DELIVERIES * DEAD_LETTERS);
    expect((await historyOf(id)).find((event) => event.type === "workflow_escalated")).toMatchObject({ stepId: "only", data: { phase: "action" } });
    await vi.waitFor(async () => expect(await indexRow(id)).toMatchObject({ status: "needs_attention", version: (await objectRecord(id)).workflow!.version }));
  }, 70_000);

  it("fails the workflow in the object and the index when the poison attempt was its last and onFailure is fail", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    injectFault("consumerThrows", { probability: 1, times: DELIVERIES * DEAD_LETTERS });
    const id = uniqueId();
    await start({ name: "poison", onFailure: "fail", defaults: { ...FAST, retry: { ...FAST.retry, maxAttempts: 1 } }, steps: [poisonStep] }, { id });
    const workflow = await waitForStatus(id, "failed", 60_000);
    expect(workflow.steps[0]).toMatchObject({ status: "failed", error: { message: expect.stringMatching(/dead-lettered/), retryable: true } });
    expect(workflow.error.message).toMatch(/step "only" failed/);
    expect(remote.calls).toHaveLength(0);
    await vi.waitFor(async () => expect(await indexRow(id)).toMatchObject({ status: "failed", ended_at: workflow.endedAt, version: (await objectRecord(id)).workflow!.version }));
  }, 70_000);
});
