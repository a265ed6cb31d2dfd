import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { WorkflowScheduler } from "../../src/workflow/object";
import type { TaskMessage } from "../../src/domain/machine/task-message";
import { getWorkflow, historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";
import { taskQueueNameOf, watchDeliveries, watchSends } from "../helpers/queue";

afterEach(() => vi.restoreAllMocks());

/** Hands one batch to the consumer, as the queue would, and returns what it answered. */
async function deliver(messages: { id: string; attempts: number; body: TaskMessage }[]) {
  const batch = createMessageBatch("shepherd-tasks", messages.map((message) => ({ ...message, timestamp: new Date() })));
  const ctx = createExecutionContext();
  await worker.queue(batch, env, ctx);
  return getQueueResult(batch, ctx);
}

const oneStep = { name: "duplicate", defaults: FAST, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }] };

describe("case 5: duplicate delivery", () => {
  it("performs a message delivered twice with the same id once: the second copy is acked without calling the remote, and so is a redelivery after the step ended", async () => {
    const remote = mockRemote(() => json({ charged: true }));
    const id = uniqueId();
    const sends = watchSends((message) => message.workflowId === id);
    await start(oneStep, { id });
    const body = sends.of(id)[0]!.message;

    // The same message id twice in one batch (at-least-once delivery).
    const first = await deliver([
      { id: "m-1", attempts: 1, body },
      { id: "m-1", attempts: 1, body },
    ]);
    expect(first.explicitAcks).toEqual(["m-1", "m-1"]);
    expect(first.retryMessages).toEqual([]);
    const completed = await waitForStatus(id, "completed");

    // The same id again after the step finished, as after an ack that was lost.
    const late = await deliver([{ id: "m-1", attempts: 2, body }]);
    expect(late.explicitAcks).toEqual(["m-1"]);
    expect(late.retryMessages).toEqual([]);

    // One remote effect for (workflow, step), one start of the attempt, nothing changed by the copies.
    expect(remote.requestsFor(`${id}:charge`)).toBe(1);
    expect(remote.successesFor(`${id}:charge`)).toBe(1);
    expect((await historyOf(id)).filter((event) => event.type === "step_started")).toHaveLength(1);
    expect(await getWorkflow(id)).toEqual(completed);
  });

  it("acks a real-queue redelivery after a lost ack without calling the remote again", async () => {
    const id = uniqueId();
    let redelivered!: () => void;
    const secondDeliveryDone = new Promise<void>((resolve) => (redelivered = resolve));
    // The remote takes its time, so the redelivery arrives while the first attempt is still running.
    const remote = mockRemote(async () => {
      await secondDeliveryDone;
      return json({ charged: true });
    });
    const claims = vi.spyOn(WorkflowScheduler.prototype, "claim");
    // The consumer's ack of the first delivery never reaches the queue (the invocation dies after its work).
    const queue = watchDeliveries({ loseAck: (delivery) => delivery.body?.workflowId === id && delivery.attempts === 1 });
    await start(oneStep, { id });

    await vi.waitFor(() => expect(queue.of(id).map((delivery) => delivery.answer)).toEqual(["ack", "ack"]), { timeout: 5_000, interval: 10 });
    redelivered();
    await waitForStatus(id, "completed");

    const [firstDelivery, secondDelivery] = queue.of(id);
    expect(secondDelivery).toMatchObject({ queue: taskQueueNameOf(id), id: firstDelivery!.id, attempts: 2 });
    // The second claim was refused before anything reached the remote.
    const replies = await Promise.all(claims.mock.results.map((result) => result.value));
    expect(replies.map((reply) => reply.ok === true || reply.code)).toEqual([true, "already_claimed"]);
    expect(remote.requestsFor(`${id}:charge`)).toBe(1);
    expect(remote.successesFor(`${id}:charge`)).toBe(1);
    expect((await historyOf(id)).filter((event) => event.type === "step_started")).toHaveLength(1);
    // Acked the second time: no third delivery, no dead letter.
    expect(queue.of(id)).toHaveLength(2);
  });
});
