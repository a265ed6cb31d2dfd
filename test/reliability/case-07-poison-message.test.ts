import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../engine/fixtures";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

// wrangler.toml: max_retries = 3, so a message that always fails is delivered 4 times, then dead-lettered.
const DELIVERIES = 4;

describe("case 7: poison message", () => {
  it("dead-letters a message the consumer always fails on; the DLQ consumer fails the attempt and the retry policy takes over", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    injectFault("consumerThrows", { probability: 1, times: DELIVERIES });
    const id = uniqueId();
    await start({ name: "poison", defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });

    const workflow = await waitForStatus(id, "completed", 30_000);
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["failed", "succeeded"]);
    const dead = (await historyOf(id)).find((event) => event.type === "task_dead_lettered");
    expect(dead).toMatchObject({ stepId: "only", attempt: 1, data: { outcome: "attempt failed" } });
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
    expect(timesFired("consumerThrows")).toBe(DELIVERIES);
  }, 40_000);

  it("escalates the step in the object and the index when the dead-lettered attempt was its last", async () => {
    mockRemote(() => json({ ok: true }));
    injectFault("consumerThrows", { probability: 1, times: DELIVERIES });
    const id = uniqueId();
    await start(
      { name: "poison", onFailure: "escalate", defaults: { ...FAST, retry: { ...FAST.retry, maxAttempts: 1 } }, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] },
      { id },
    );
    const workflow = await waitForStatus(id, "needs_attention", 30_000);
    expect(workflow.steps[0]).toMatchObject({ status: "failed", error: { message: expect.stringMatching(/dead-lettered/) } });
    await vi.waitFor(async () => expect((await indexRow(id))?.status).toBe("needs_attention"));
  }, 40_000);
});
