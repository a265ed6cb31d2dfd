// The machine's side of worker pools: a worker action's attempt is offered to its pool (priority and fairness key
// with it), claimed only through the pool it waits in, and moved to the next pool after `fallback.afterMs` by the
// supervisor, the same attempt. Tables of steps and what each leads to.
import { describe, expect, it } from "vitest";
import { diagnose } from "../../src/domain/machine/diagnosis";
import { nextDeadline } from "../../src/domain/machine/deadlines";
import { cancelRequested, claimed, describeEffects, describeHistory, failedPermanently, mapStep, plan, Run, step, succeeded, terminateRequested, TEST_RETRY, workerAction } from "./builders";

/** A worker step with no scheduleToStartMs: a task may wait in its pool for as long as it takes. */
const pooled = (fields: Parameters<typeof workerAction>[1] = {}, stepFields: Record<string, unknown> = {}) =>
  plan([step("s", { action: workerAction("gpu", fields), ...stepFields })], { defaults: { retry: TEST_RETRY, timeouts: { startToCloseMs: 5_000, heartbeatMs: 1_000 } } });

describe("a worker action's attempt", () => {
  it.each([
    { name: "default priority, no key", stepFields: {}, placement: {}, offer: { pool: "gpu", priority: 3, fairnessKey: "" } },
    { name: "the workflow's priority and key", stepFields: {}, placement: { priority: 2, fairnessKey: "acme" }, offer: { pool: "gpu", priority: 2, fairnessKey: "acme" } },
    { name: "the step's priority wins", stepFields: { priority: 1 }, placement: { priority: 5 }, offer: { pool: "gpu", priority: 1, fairnessKey: "" } },
  ])("is offered to its pool: $name", ({ stepFields, placement, offer }) => {
    const run = new Run(pooled({}, stepFields), { placement });
    expect(run.effects).toEqual([{ type: "EnqueueAttempt", stepId: "s", attempt: 1, kind: "action", offer }]);
  });

  it("waits in its pool with no lost-message check and no deadline without a fallback", () => {
    const run = new Run(pooled());
    expect(run.step("s").attempts[0]).toMatchObject({ status: "scheduled", pool: "gpu" });
    expect(run.step("s").attempts[0]?.queueCheckAt).toBeUndefined();
    expect(nextDeadline(run.state)).toBeUndefined();
    const diagnosis = diagnose(run.state, { alarmAt: null, recentDecisions: [] });
    expect(diagnosis.blockedOn).toEqual([expect.objectContaining({ stepId: "s", reason: "waiting_for_worker", pool: "gpu" })]);
    expect(diagnosis.healthy).toBe(true);
  });

  it.each([
    { by: undefined, code: "reassigned" },
    { by: "cpu", code: "reassigned" },
  ])("is not claimed by $by (an agent, or a pool it does not wait in)", ({ by, code }) => {
    const run = new Run(pooled());
    expect(run.send({ type: "AttemptClaimed", stepId: "s", attempt: 1, ...(by ? { pool: by } : {}) }).reply).toMatchObject({ ok: false, code });
    expect(run.send({ type: "AttemptClaimed", stepId: "s", attempt: 1, pool: "gpu" }).reply).toMatchObject({ ok: true, task: { action: { type: "worker", pool: "gpu" } } });
  });

  it("an http attempt is not claimed through a pool", () => {
    const run = new Run(plan([step("s")]));
    expect(run.send({ ...claimed("s", 1), pool: "gpu" }).reply).toMatchObject({ ok: false, code: "reassigned" });
  });
});

describe("a worker task's fallback", () => {
  const fallback = { fallback: { pools: ["gpu-eu", "cpu"], afterMs: 60_000 } };

  it("moves to each next pool after afterMs, the same attempt, and stays in the last", () => {
    const run = new Run(pooled(fallback));
    expect(nextDeadline(run.state)).toMatchObject({ reason: "reassign", stepId: "s", at: run.now + 60_000 });
    const first = run.wait(60_000).send({ type: "DeadlinesReached" });
    expect(describeHistory(first.history)).toEqual(["task_reassigned s#1"]);
    expect(first.history[0]?.data).toEqual({ from: "gpu", to: "gpu-eu", waitedMs: 60_000 });
    expect(first.effects).toEqual([{ type: "EnqueueAttempt", stepId: "s", attempt: 1, kind: "action", offer: { pool: "gpu-eu", priority: 3, fairnessKey: "", withdrawFrom: "gpu" } }]);
    const second = run.wait(60_000).send({ type: "DeadlinesReached" });
    expect(second.history[0]?.data).toMatchObject({ from: "gpu-eu", to: "cpu" });
    expect(nextDeadline(run.state)).toBeUndefined();
    expect(run.step("s")).toMatchObject({ attempt: 1, budgetUsed: 1 });
    expect(run.send({ type: "AttemptClaimed", stepId: "s", attempt: 1, pool: "gpu" }).reply).toMatchObject({ ok: false, code: "reassigned" });
    expect(run.send({ type: "AttemptClaimed", stepId: "s", attempt: 1, pool: "cpu" }).reply).toMatchObject({ ok: true });
  });

  it("does not move before afterMs, nor once a worker took it", () => {
    const run = new Run(pooled(fallback));
    expect(run.wait(59_999).send({ type: "DeadlinesReached" }).history).toEqual([]);
    run.send({ type: "AttemptClaimed", stepId: "s", attempt: 1, pool: "gpu" });
    expect(run.wait(10).send({ type: "DeadlinesReached" }).history.map((entry) => entry.type)).not.toContain("task_reassigned");
  });
});

describe("a worker action as a compensation", () => {
  it("is offered to its pool when the saga reaches it, and claimed through it", () => {
    const run = new Run(
      plan([step("a", { compensate: workerAction("undo") }), step("b")], { defaults: { retry: TEST_RETRY, timeouts: { startToCloseMs: 5_000, heartbeatMs: 1_000 } } }),
    );
    run.send(claimed("a"));
    run.send(succeeded("a"));
    run.send(claimed("b"));
    run.send(failedPermanently("b"));
    const offered = run.effects.at(-1);
    expect(offered).toMatchObject({ type: "EnqueueAttempt", stepId: "a", kind: "compensation", offer: { pool: "undo" } });
    const attempt = run.step("a").attempt;
    expect(run.send({ type: "AttemptClaimed", stepId: "a", attempt, pool: "undo" }).reply).toMatchObject({ ok: true, task: { kind: "compensation", idempotencyKey: expect.stringMatching(/:compensate$/) } });
  });
});

describe("a worker task that ends unclaimed", () => {
  it.each([
    { name: "its workflow is cancelled", event: cancelRequested() },
    { name: "its workflow is terminated", event: terminateRequested() },
  ])("is withdrawn from its pool when $name", ({ event }) => {
    const run = new Run(pooled());
    expect(describeEffects(run.send(event).effects)).toEqual(["withdraw s#1 from gpu"]);
  });

  it("is withdrawn from its pool when no worker took it by scheduleToStartMs, and the retry offered", () => {
    const run = new Run(pooled({}, { timeouts: { scheduleToStartMs: 10_000, startToCloseMs: 5_000, heartbeatMs: 1_000 } }));
    const timedOut = run.wait(10_000).send({ type: "DeadlinesReached" });
    expect(describeEffects(timedOut.effects)).toEqual(["withdraw s#1 from gpu"]);
    const retried = run.wait(60_000).send({ type: "DeadlinesReached" });
    expect(describeEffects(retried.effects)).toEqual(["enqueue s#2 action"]);
  });

  it("is withdrawn from the pool it moved to, not the one it left", () => {
    const run = new Run(pooled({ fallback: { pools: ["cpu"], afterMs: 60_000 } }));
    run.wait(60_000).send({ type: "DeadlinesReached" });
    expect(describeEffects(run.send(cancelRequested()).effects)).toEqual(["withdraw s#1 from cpu"]);
  });

  it("each item of a stopped map is withdrawn from its pool", () => {
    const run = new Run(plan([mapStep("each", [1, 2], { maxConcurrency: 2, step: { action: workerAction("gpu") } })]));
    expect(describeEffects(run.send(cancelRequested()).effects).sort()).toEqual(["withdraw each#0#1 from gpu", "withdraw each#1#1 from gpu"]);
  });

  it("a task a worker took is not withdrawn: its report is fenced instead", () => {
    const run = new Run(pooled());
    run.send({ type: "AttemptClaimed", stepId: "s", attempt: 1, pool: "gpu" });
    expect(describeEffects(run.send(cancelRequested()).effects)).toEqual([]);
  });
});
