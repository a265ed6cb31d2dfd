import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { holdBackSends } from "../helpers/queue";
import { MAX_REDISPATCHES } from "../../src/domain/machine/reports";
import { FAST } from "../helpers/policies";

afterEach(() => vi.restoreAllMocks());

async function deliverDeadLetters(bodies: unknown[]) {
  const batch = createMessageBatch("shepherd-tasks-dlq", bodies.map((body, i) => ({ id: `dead-${i}`, timestamp: new Date(), attempts: 1, body })));
  const ctx = createExecutionContext();
  await worker.queue(batch, env, ctx);
  return getQueueResult(batch, ctx);
}

const oneStep = { name: "dead-letter", defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] };

describe("the dead-letter queue's consumer", () => {
  it("sends a dead-lettered, unclaimed attempt again without using an attempt, and the work happens once", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const held = holdBackSends(id);
    await start(oneStep, { id });
    expect(held).toHaveLength(1);

    const result = await deliverDeadLetters(held);
    expect(result.explicitAcks).toEqual(["dead-0"]);

    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { n: number; status: string }) => [attempt.n, attempt.status])).toEqual([[1, "succeeded"]]);
    const dead = (await historyOf(id)).filter((event) => event.type === "task_dead_lettered");
    expect(dead).toEqual([expect.objectContaining({ stepId: "only", attempt: 1, data: { outcome: "re-dispatched", deadLetters: 1 } })]);
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
  });

  it(`fails the attempt as retryable once its message has been dead-lettered ${MAX_REDISPATCHES + 1} times (a poison message must end)`, async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const held = holdBackSends(id, MAX_REDISPATCHES + 1);
    await start(oneStep, { id });
    for (let round = 1; round <= MAX_REDISPATCHES + 1; round++) {
      expect(held).toHaveLength(round);
      await deliverDeadLetters([held.at(-1)]);
    }

    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["failed", "succeeded"]);
    expect(workflow.steps[0].attempts[0].error.message).toMatch(/dead-lettered the task message 3 times/);
    const outcomes = (await historyOf(id)).filter((event) => event.type === "task_dead_lettered").map((event) => event.data.outcome);
    expect(outcomes).toEqual(["re-dispatched", "re-dispatched", "attempt failed"]);
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
  });

  it("only notes a dead letter for an attempt that already ran, changing nothing", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const held = holdBackSends(id);
    await start(oneStep, { id });
    // The agent got a second delivery through after all: the attempt ran and the workflow completed.
    await worker.queue(createMessageBatch("shepherd-tasks", [{ id: "live", timestamp: new Date(), attempts: 1, body: held[0] }]), env, createExecutionContext());
    const completed = await waitForStatus(id, "completed");

    await deliverDeadLetters(held);
    const after = await waitForStatus(id, "completed");
    expect(after.updatedAt).toBe(completed.updatedAt);
    const dead = (await historyOf(id)).find((event) => event.type === "task_dead_lettered");
    expect(dead?.data.outcome).toMatch(/^ignored/);
  });

  it("acks a malformed dead letter instead of retrying it forever", async () => {
    const result = await deliverDeadLetters([{ not: "a task" }]);
    expect(result.explicitAcks).toEqual(["dead-0"]);
    expect(result.retryMessages).toEqual([]);
  });
});
