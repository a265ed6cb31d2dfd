import { afterEach, describe, expect, it, vi } from "vitest";
import { historyOf, start, waitForStatus, waitForStep } from "../helpers/api";
import { FAST, PATIENT } from "../helpers/policies";
import { httpStep, json, mockRemote } from "../helpers/remote";
import { elapse } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

describe("retries of transient failures", () => {
  it("case 8 (remote 5xx/429): retries a step answered 503 twice and succeeds on the third attempt, with the backoff in the history", async () => {
    const remote = mockRemote((call, n) => (n <= 2 ? json({ error: "busy" }, 503) : json({ ok: true })));
    const { id } = await start({ name: "flaky", defaults: FAST, steps: [httpStep("pay")] });
    const workflow = await waitForStatus(id, "completed");

    const step = workflow.steps[0];
    expect(step.attempt).toBe(3);
    expect(step.attempts.map((a: { status: string }) => a.status)).toEqual(["failed", "failed", "succeeded"]);
    expect(step.attempts[0].error.status).toBe(503);
    expect(remote.requestsFor(`${id}:pay`)).toBe(3);
    expect(remote.calls.map((call) => call.headers["shepherd-attempt"])).toEqual(["1", "2", "3"]);

    const history = await historyOf(id);
    const retries = history.filter((event) => event.type === "step_retry_scheduled");
    // Exponential backoff with jitter 0: 20 ms, then 40 ms.
    expect(retries.map((event) => event.data.delayMs)).toEqual([20, 40]);
    expect(history.filter((event) => event.type === "step_failed").map((event) => event.attempt)).toEqual([1, 2]);
    const secondScheduled = history.find((event) => event.type === "step_scheduled" && event.attempt === 2);
    const firstFailure = history.find((event) => event.type === "step_failed" && event.attempt === 1);
    expect(secondScheduled!.at - firstFailure!.at).toBeGreaterThanOrEqual(20);
  });

  it("case 8 (remote 5xx/429): waits at least Retry-After before retrying a 429, capped at maxIntervalMs", async () => {
    const maxIntervalMs = 30_000;
    mockRemote((_call, n) => (n === 1 ? json({ error: "slow down" }, 429, { "Retry-After": "60" }) : json({ ok: true })));
    const definition = {
      name: "rate-limited",
      defaults: { ...PATIENT, retry: { ...PATIENT.retry, maxIntervalMs } },
      steps: [httpStep("pay")],
    };
    const { id } = await start(definition);
    await waitForStep(id, "pay", "retrying");
    await elapse(id, maxIntervalMs);
    await waitForStatus(id, "completed");
    const retry = (await historyOf(id)).find((event) => event.type === "step_retry_scheduled");
    // Retry-After asked for 60 000 ms; the policy caps any delay at 30 000 ms.
    expect(retry?.data.delayMs).toBe(maxIntervalMs);
  });

  it("gives up after maxAttempts and applies onFailure", async () => {
    const remote = mockRemote(() => json({ error: "down" }, 500));
    const { id } = await start({ name: "down", onFailure: "fail", defaults: FAST, steps: [httpStep("pay")] });
    const workflow = await waitForStatus(id, "failed");
    expect(workflow.steps[0].status).toBe("failed");
    expect(workflow.steps[0].attempt).toBe(3);
    expect(remote.requestsFor(`${id}:pay`)).toBe(3);
    expect(workflow.error.message).toContain('step "pay" failed');
  });
});
