import { createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { backPressureLagMs } from "../../src/config";
import { backPressure, QUEUE_LAG_FRESH_MS, type QueueLagSample } from "../../src/domain/admission/back-pressure";
import { currentQueueLag, forgetQueueLagReads, reportQueueLag, worstFreshSample } from "../../src/admission/queue-lag-monitor";

/** The deployment's one gauge; each test starts from a clean one by reporting at a later time than the last. */
const gauge = () => env.QUEUE_LAG.getByName("task-queue");

/** wrangler.toml's max_batch_size for the task queues: a full batch says the queue is behind. */
const TASK_BATCH_MAX = 10;

/** A full batch from `queue` whose oldest message waited `lagMs` at `now`. */
function fullBatch(queue: string, lagMs: number, now: number) {
  return createMessageBatch(
    queue,
    Array.from({ length: TASK_BATCH_MAX }, (_, i) => ({ id: `${queue}-${now}-${i}`, timestamp: new Date(now - lagMs + i), attempts: 1, body: {} })),
  );
}

let clock = Date.now();
/** A time later than any sample an earlier test left, so the gauge's answer is this test's alone. */
const later = () => (clock += 10 * QUEUE_LAG_FRESH_MS);

beforeEach(() => forgetQueueLagReads());

describe("the worst fresh sample", () => {
  const rows: { name: string; samples: QueueLagSample[]; expected: QueueLagSample | undefined }[] = [
    { name: "none: no answer", samples: [], expected: undefined },
    { name: "one queue: its sample", samples: [{ lagMs: 700, at: 1_000 }], expected: { lagMs: 700, at: 1_000 } },
    {
      name: "two fresh: the larger lag, with its own time",
      samples: [{ lagMs: 0, at: 10_000 }, { lagMs: 12_000, at: 9_000 }],
      expected: { lagMs: 12_000, at: 9_000 },
    },
    {
      name: "one exactly QUEUE_LAG_FRESH_MS older than the newest still counts",
      samples: [{ lagMs: 0, at: 10_000 }, { lagMs: 12_000, at: 10_000 - QUEUE_LAG_FRESH_MS }],
      expected: { lagMs: 12_000, at: 10_000 - QUEUE_LAG_FRESH_MS },
    },
    {
      name: "a queue that stopped reporting is left out, however far behind it was",
      samples: [{ lagMs: 0, at: 10_000 }, { lagMs: 60_000, at: 10_000 - QUEUE_LAG_FRESH_MS - 1 }],
      expected: { lagMs: 0, at: 10_000 },
    },
    {
      name: "equal lags: the newer sample",
      samples: [{ lagMs: 300, at: 1_000 }, { lagMs: 300, at: 2_000 }],
      expected: { lagMs: 300, at: 2_000 },
    },
  ];
  it.each(rows)("$name", ({ samples, expected }) => {
    expect(worstFreshSample(samples)).toEqual(expected);
  });
});

describe("the queue-lag gauge, one sample per queue", () => {
  it("answers the worst fresh sample among the queues, not the latest report", async () => {
    const at = later();
    await gauge().record({ queue: "shepherd-tasks-1", lagMs: 20_000, at });
    await gauge().record({ queue: "shepherd-tasks", lagMs: 0, at: at + 1_000 });
    expect((await gauge().gauge()).sample).toEqual({ lagMs: 20_000, at });
  });

  it("replaces a queue's sample with its newer one and ignores an older one arriving late", async () => {
    const at = later();
    await gauge().record({ queue: "shepherd-tasks", lagMs: 30_000, at });
    await gauge().record({ queue: "shepherd-tasks", lagMs: 0, at: at + 500 });
    await gauge().record({ queue: "shepherd-tasks", lagMs: 50_000, at: at + 100 });
    expect((await gauge().gauge()).sample).toEqual({ lagMs: 0, at: at + 500 });
  });

  it("reports each queue's batches within the same second: the throttle is kept per queue", async () => {
    const now = later();
    await reportQueueLag(env, fullBatch("shepherd-tasks", 3_000, now), now);
    await reportQueueLag(env, fullBatch("shepherd-tasks-1", 18_000, now + 10), now + 10);
    // Within the second, the same queue's next report is held back.
    await reportQueueLag(env, fullBatch("shepherd-tasks-1", 40_000, now + 20), now + 20);
    expect(await currentQueueLag(env, now + 30)).toEqual({ lagMs: 18_000, at: now + 10 });
  });

  it("holds back new starts while one queue is behind the bound, though the other has caught up", async () => {
    const now = later();
    const boundMs = backPressureLagMs(env);
    await gauge().record({ queue: "shepherd-tasks", lagMs: 0, at: now });
    await gauge().record({ queue: "shepherd-tasks-1", lagMs: boundMs + 15_000, at: now });
    expect(backPressure(await currentQueueLag(env, now), now, boundMs)).toMatchObject({ overloaded: true, lagMs: boundMs + 15_000 });
    // The lagging queue catches up: starts are accepted again.
    await gauge().record({ queue: "shepherd-tasks-1", lagMs: 0, at: now + 1 });
    forgetQueueLagReads();
    expect(backPressure(await currentQueueLag(env, now + 2), now + 2, boundMs)).toEqual({ overloaded: false });
  });
});
