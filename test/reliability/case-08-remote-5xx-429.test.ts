import { afterEach, describe, expect, it, vi } from "vitest";
import { getWorkflow, historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { httpStep, json, mockRemote, type RemoteHandler } from "../helpers/remote";
import { elapse } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

/** A remote that answers its n-th request with `answers[n - 1]`, noting when each request arrived. */
function scriptedRemote(answers: (() => Response)[]) {
  const arrivals: number[] = [];
  const handler: RemoteHandler = (_call, n) => {
    arrivals.push(Date.now());
    return answers[n - 1]!();
  };
  return { remote: mockRemote(handler), arrivals };
}

/** Waits until the step backs off after its `attempt`-th failure. */
async function retryingAfter(id: string, attempt: number) {
  await vi.waitFor(async () => expect((await getWorkflow(id)).steps[0]).toMatchObject({ status: "retrying", attempt }));
}

/** How long after the end of one attempt the next was scheduled, in the object's (moved) time. */
function gapBefore(workflow: { steps: { attempts: { scheduledAt: number; endedAt?: number }[] }[] }, attempt: number): number {
  const attempts = workflow.steps[0]!.attempts;
  return attempts[attempt - 1]!.scheduledAt - attempts[attempt - 2]!.endedAt!;
}

async function retriesOf(id: string) {
  const history = await historyOf(id);
  return {
    delays: history.filter((event) => event.type === "step_retry_scheduled").map((event) => event.data.delayMs),
    failed: history.filter((event) => event.type === "step_failed").map((event) => [event.attempt, event.data.error.status, event.data.final]),
  };
}

describe("case 8: remote 5xx/429", () => {
  it("retries 503, 503 with exponential backoff and completes on attempt 3", async () => {
    const { remote, arrivals } = scriptedRemote([() => json({ error: "busy" }, 503), () => json({ error: "busy" }, 503), () => json({ paid: true })]);
    const id = uniqueId();
    await start({ name: "flaky", defaults: FAST, steps: [httpStep("pay")] }, { id });
    const workflow = await waitForStatus(id, "completed");

    const step = workflow.steps[0];
    expect(step).toMatchObject({ status: "succeeded", attempt: 3, output: { paid: true } });
    expect(step.attempts.map((attempt: { status: string; error?: { status?: number; retryable?: boolean } }) => [attempt.status, attempt.error?.status, attempt.error?.retryable])).toEqual([
      ["failed", 503, true],
      ["failed", 503, true],
      ["succeeded", undefined, undefined],
    ]);
    expect(remote.calls.map((call) => call.headers["shepherd-attempt"])).toEqual(["1", "2", "3"]);
    expect(remote.requestsFor(`${id}:pay`)).toBe(3);
    // initialIntervalMs 20, coefficient 2, no jitter: 20 ms, then 40 ms, and the requests were at least that far apart.
    expect(await retriesOf(id)).toEqual({ delays: [20, 40], failed: [[1, 503, false], [2, 503, false]] });
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(20);
    expect(arrivals[2]! - arrivals[1]!).toBeGreaterThanOrEqual(40);
  });

  it("waits out a 429's Retry-After before retrying, then completes on attempt 3", async () => {
    const retryAfterMs = 30_000;
    const { remote, arrivals } = scriptedRemote([
      () => json({ error: "busy" }, 503),
      () => json({ error: "slow down" }, 429, { "Retry-After": String(retryAfterMs / 1_000) }),
      () => json({ paid: true }),
    ]);
    const id = uniqueId();
    await start({ name: "rate-limited", defaults: { ...FAST, retry: { ...FAST.retry, maxIntervalMs: 60_000 } }, steps: [httpStep("pay")] }, { id });
    await retryingAfter(id, 2);
    // Nothing is sent again before the remote's Retry-After has passed.
    expect(arrivals).toHaveLength(2);
    await elapse(id, retryAfterMs);
    const workflow = await waitForStatus(id, "completed");

    expect(workflow.steps[0]).toMatchObject({ status: "succeeded", attempt: 3 });
    expect(workflow.steps[0].attempts.map((attempt: { error?: { status?: number } }) => attempt.error?.status)).toEqual([503, 429, undefined]);
    expect(remote.requestsFor(`${id}:pay`)).toBe(3);
    // The backoff would have been 40 ms; the remote asked for 30 s, and got it.
    expect((await retriesOf(id)).delays).toEqual([20, retryAfterMs]);
    expect(gapBefore(workflow, 3)).toBeGreaterThanOrEqual(retryAfterMs);
  });

  it("honours Retry-After only up to maxIntervalMs, so a remote cannot park a step", async () => {
    const maxIntervalMs = 30_000;
    const { arrivals } = scriptedRemote([() => json({ error: "slow down" }, 429, { "Retry-After": "3600" }), () => json({ paid: true })]);
    const id = uniqueId();
    await start({ name: "rate-limited-capped", defaults: { ...FAST, retry: { ...FAST.retry, maxIntervalMs } }, steps: [httpStep("pay")] }, { id });
    await retryingAfter(id, 1);
    expect(arrivals).toHaveLength(1);
    // The alarm is due once maxIntervalMs has passed, not the hour the remote asked for.
    await elapse(id, maxIntervalMs);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0]).toMatchObject({ status: "succeeded", attempt: 2 });
    expect((await retriesOf(id)).delays).toEqual([maxIntervalMs]);
    expect(gapBefore(workflow, 2)).toBeGreaterThanOrEqual(maxIntervalMs);
  });
});
