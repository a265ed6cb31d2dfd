import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { taskQueueShards } from "../../src/config";
import type { TaskMessage } from "../../src/domain/machine/task-message";
import { taskQueueFor, taskQueueShardOf } from "../../src/workflow/task-queues";
import { start, uniqueId, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { taskQueueNameOf, taskQueueOf, watchDeliveries, watchSends } from "../helpers/queue";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { SHARD_SETTING_CASES } from "../helpers/shard-settings";

afterEach(() => vi.restoreAllMocks());

/** Workflow ids, made until each of the two queues has at least `each` of them. */
function idsOnBothQueues(each: number): string[] {
  const ids: string[] = [];
  const count = [0, 0];
  while (Math.min(...count) < each) {
    const id = uniqueId("sharded");
    const shard = taskQueueShardOf(id, 2);
    if (count[shard]! >= each) continue;
    count[shard]! += 1;
    ids.push(id);
  }
  return ids;
}

const twoSteps = { name: "sharded", defaults: FAST, steps: ["a", "b"].map((id) => ({ id, action: { type: "http", url: `${REMOTE}/${id}` } })) };

describe("TASK_QUEUE_SHARDS", () => {
  // wrangler.toml binds TASKS and TASKS_1.
  it.each(SHARD_SETTING_CASES)("%s → %i queues, with two bound", (raw, expected) => {
    expect(taskQueueShards({ ...env, TASK_QUEUE_SHARDS: raw })).toBe(expected);
  });

  it("never counts a queue that is not bound: TASKS_2 counts once it is there, and a gap ends the count", () => {
    const { TASKS_1: _second, ...onlyFirst } = env;
    expect(taskQueueShards({ ...onlyFirst, TASK_QUEUE_SHARDS: "2" } as unknown as Env)).toBe(1);
    const withThird = { ...env, TASKS_2: env.TASKS_1, TASK_QUEUE_SHARDS: "5" };
    expect(taskQueueShards(withThird)).toBe(3);
    expect(taskQueueShards({ ...onlyFirst, TASKS_2: env.TASKS_1, TASK_QUEUE_SHARDS: "3" } as unknown as Env)).toBe(1);
  });

  it("is 2 in the tests, so the sharded paths are the ones they run", () => {
    expect(taskQueueShards(env)).toBe(2);
  });
});

describe("which queue a workflow's messages take", () => {
  it("spreads workflows over both queues about evenly", () => {
    const counts = [0, 0];
    for (let n = 0; n < 1_000; n++) counts[taskQueueShardOf(`wf-spread-${n}`, 2)]! += 1;
    for (const count of counts) expect(count).toBeGreaterThan(400);
  });

  it("keeps one workflow on one queue: TASKS for shard 0, TASKS_1 for shard 1", () => {
    for (const id of idsOnBothQueues(3)) {
      const expected = taskQueueShardOf(id, 2) === 0 ? env.TASKS : env.TASKS_1;
      for (let n = 0; n < 3; n++) expect(taskQueueFor(env, id)).toBe(expected);
    }
  });

  it("sends everything to TASKS with one queue", () => {
    const single = { ...env, TASK_QUEUE_SHARDS: "1" };
    for (const id of idsOnBothQueues(3)) expect(taskQueueFor(single, id)).toBe(env.TASKS);
  });

  it("sends every task message of a workflow on its own queue, and none on the other", async () => {
    mockRemote(() => json({ ok: true }));
    const ids = idsOnBothQueues(2);
    const onQueue = new Map<Queue, TaskMessage[]>([env.TASKS, env.TASKS_1].map((queue) => [queue, []]));
    for (const queue of onQueue.keys()) {
      const real = queue.sendBatch.bind(queue);
      vi.spyOn(queue, "sendBatch").mockImplementation(async (messages, options) => {
        onQueue.get(queue)!.push(...[...messages].map((message) => message.body as TaskMessage));
        return real(messages, options);
      });
    }
    await Promise.all(ids.map((id) => start(twoSteps, { id })));
    await Promise.all(ids.map((id) => waitForStatus(id, "completed")));
    for (const [queue, messages] of onQueue) {
      const mine = messages.filter((message) => ids.includes(message.workflowId));
      expect(mine.length).toBeGreaterThan(0);
      for (const message of mine) expect(taskQueueOf(message.workflowId)).toBe(queue);
    }
  });
});

describe("two task queues, end to end", () => {
  it("completes workflows on both queues through the real queues: the consumer gets batches from shepherd-tasks and shepherd-tasks-1", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const sends = watchSends();
    const deliveries = watchDeliveries();
    const ids = idsOnBothQueues(3);
    await Promise.all(ids.map((id) => start(twoSteps, { id })));
    await Promise.all(ids.map((id) => waitForStatus(id, "completed")));

    for (const id of ids) {
      expect(sends.of(id).length).toBeGreaterThan(0);
      const queues = new Set(deliveries.of(id).map((delivery) => delivery.queue));
      expect([...queues]).toEqual([taskQueueNameOf(id)]);
      expect(remote.requestsFor(`${id}:a`)).toBe(1);
      expect(remote.requestsFor(`${id}:b`)).toBe(1);
    }
    const used = new Set(ids.flatMap((id) => deliveries.of(id).map((delivery) => delivery.queue)));
    expect([...used].sort()).toEqual(["shepherd-tasks", "shepherd-tasks-1"]);
  });
});
