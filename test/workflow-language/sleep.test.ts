import { evictDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { getWorkflow, historyOf, start, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { httpStep, json, mockRemote } from "../helpers/remote";
import { alarmOf, schedulerStub } from "../helpers/scheduler";
import { backdate, fireAlarm } from "../helpers/time";
import { DAY, HOUR, restartObject, sleepStep, stepOf } from "../helpers/workflow-language";

afterEach(() => vi.restoreAllMocks());

/**
 * Lets `ms` pass for the workflow and fires its alarm. Returns the sleeping step's wake time as stored once
 * the time has moved (what its output must say it slept until).
 */
async function sleepThrough(id: string, stepId: string, ms: number): Promise<number> {
  await backdate(id, { ms });
  const wakeAt = stepOf(await getWorkflow(id), stepId).sleepingUntil;
  expect(wakeAt, "the step should still be sleeping before the alarm fires").toBeTypeOf("number");
  expect(wakeAt!).toBeLessThanOrEqual(Date.now());
  expect(await fireAlarm(id)).toBe(true);
  return wakeAt!;
}

/** Whole seconds, so the ISO 8601 form of the time says exactly the same instant. */
const wholeSecondsFromNow = (ms: number) => Math.floor((Date.now() + ms) / 1000) * 1000;

describe("a sleep step", () => {
  it("sleeps for durationMs with no queue message and no remote call, wakes when its alarm fires, then the next step runs", async () => {
    const remote = mockRemote(() => json({ shipped: true }));
    const queue = watchSends();
    const before = Date.now();
    const { id } = await start({ name: "nap-then-ship", defaults: FAST, steps: [sleepStep("nap", { durationMs: HOUR }), httpStep("ship")] });

    const sleeping = await getWorkflow(id);
    expect(sleeping.status).toBe("running");
    const nap = stepOf(sleeping, "nap");
    expect(nap).toMatchObject({ status: "sleeping", attempts: [] });
    expect(nap.sleepingUntil).toBeGreaterThanOrEqual(before + HOUR);
    expect(nap.sleepingUntil).toBeLessThanOrEqual(Date.now() + HOUR);
    expect(stepOf(sleeping, "ship").status).toBe("pending");
    // The object's alarm is what wakes it: armed no later than the wake time.
    const alarm = await alarmOf(id);
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(nap.sleepingUntil!);
    expect((await historyOf(id)).find((event) => event.type === "step_sleeping")).toMatchObject({ stepId: "nap", data: { until: nap.sleepingUntil } });

    // An alarm that fires before the wake time leaves it asleep.
    expect(await fireAlarm(id)).toBe(true);
    expect(stepOf(await getWorkflow(id), "nap").status).toBe("sleeping");

    const sleptUntil = await sleepThrough(id, "nap", HOUR);
    const workflow = await waitForStatus(id, "completed");

    expect(stepOf(workflow, "nap")).toMatchObject({ status: "succeeded", output: { sleptUntil }, attempts: [] });
    expect(workflow.output).toEqual({ nap: { sleptUntil }, ship: { shipped: true } });
    const history = await historyOf(id);
    expect(history.filter((event) => event.stepId === "nap").map((event) => event.type)).toEqual(["step_sleeping", "step_succeeded"]);
    expect(history.find((event) => event.type === "step_succeeded" && event.stepId === "nap")?.attempt).toBeUndefined();
    // The next step was scheduled only once the sleep had ended.
    const woke = history.findIndex((event) => event.type === "step_succeeded" && event.stepId === "nap");
    const shipScheduled = history.findIndex((event) => event.type === "step_scheduled" && event.stepId === "ship");
    expect(shipScheduled).toBeGreaterThan(woke);
    // Nothing went through the queue or to a remote for the sleep: only the ship step did.
    expect(queue.of(id).map((sent) => sent.message.stepId)).toEqual(["ship"]);
    expect(remote.calls.map((call) => call.headers["shepherd-step-id"])).toEqual(["ship"]);
  });

  it.each<[string, (at: number) => unknown]>([
    ["epoch milliseconds", (at) => at],
    ["an ISO 8601 string", (at) => new Date(at).toISOString()],
  ])("sleeps until a time templated from the input, given as %s", async (_format, format) => {
    mockRemote(() => json({ released: true }));
    const releaseAt = wholeSecondsFromNow(2 * HOUR);
    const { id } = await start(
      { name: "release", defaults: FAST, steps: [sleepStep("hold", { until: "{{ input.releaseAt }}" }), httpStep("release")] },
      { input: { releaseAt: format(releaseAt) } },
    );

    const sleeping = await getWorkflow(id);
    expect(stepOf(sleeping, "hold")).toMatchObject({ status: "sleeping", sleepingUntil: releaseAt });
    expect((await historyOf(id)).find((event) => event.type === "step_sleeping")?.data).toEqual({ until: releaseAt });

    const sleptUntil = await sleepThrough(id, "hold", 2 * HOUR);
    const workflow = await waitForStatus(id, "completed");
    expect(stepOf(workflow, "hold").output).toEqual({ sleptUntil });
    expect(workflow.output.release).toEqual({ released: true });
  });

  it.each<[string, (at: number) => string | number]>([
    ["an ISO 8601 date-time", (at) => new Date(at).toISOString()],
    ["epoch milliseconds", (at) => at],
  ])("sleeps until a literal time written in the definition as %s", async (_format, format) => {
    const releaseAt = wholeSecondsFromNow(HOUR);
    const { id } = await start({ name: "literal-until", steps: [sleepStep("hold", { until: format(releaseAt) })] });
    expect(stepOf(await getWorkflow(id), "hold")).toMatchObject({ status: "sleeping", sleepingUntil: releaseAt });

    const sleptUntil = await sleepThrough(id, "hold", HOUR);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output).toEqual({ hold: { sleptUntil } });
  });

  it("wakes at once when the time it should sleep until has already passed", async () => {
    const past = Date.now() - HOUR;
    const { id, workflow: started } = await start({ name: "past", steps: [sleepStep("hold", { until: "{{ input.at }}" })] }, { input: { at: past } });
    // Already awake in the answer to the start: no alarm was needed.
    expect(stepOf(started, "hold")).toMatchObject({ status: "succeeded", output: { sleptUntil: past } });
    await waitForStatus(id, "completed");
    expect((await historyOf(id)).map((event) => event.type)).toEqual(["workflow_started", "step_sleeping", "step_succeeded", "workflow_completed"]);
  });

  it.each<[string, unknown]>([
    ["is not a time", "next tuesday"],
    ["is more than 365 days ahead", Date.now() + 400 * DAY],
  ])("fails the step, without a retry, when the templated until %s", async (_name, at) => {
    const { id } = await start({ name: "bad-until", onFailure: "fail", steps: [sleepStep("hold", { until: "{{ input.at }}" })] }, { input: { at } });
    const workflow = await waitForStatus(id, "failed");
    const hold = stepOf(workflow, "hold");
    expect(hold).toMatchObject({ status: "failed", attempts: [] });
    expect(hold.error.retryable).toBe(false);
    expect(hold.error.message).toMatch(/until/);
    expect((await historyOf(id)).some((event) => event.type === "step_retry_scheduled")).toBe(false);
  });

  it("keeps sleeping through an eviction and a restart of its object, then wakes at the alarm, once", async () => {
    const remote = mockRemote(() => json({ shipped: true }));
    const { id } = await start({ name: "evicted-nap", defaults: FAST, steps: [sleepStep("nap", { durationMs: HOUR }), httpStep("ship")] });
    const asleep = stepOf(await getWorkflow(id), "nap");
    const alarm = await alarmOf(id);
    expect(alarm).not.toBeNull();

    await evictDurableObject(schedulerStub(id));
    expect(await alarmOf(id)).toBe(alarm);
    expect(stepOf(await getWorkflow(id), "nap")).toEqual(asleep);

    await restartObject(id);
    expect(await alarmOf(id)).toBe(alarm);
    expect(stepOf(await getWorkflow(id), "nap")).toEqual(asleep);

    const sleptUntil = await sleepThrough(id, "nap", HOUR);
    const workflow = await waitForStatus(id, "completed");
    expect(stepOf(workflow, "nap").output).toEqual({ sleptUntil });
    const napEvents = (await historyOf(id)).filter((event) => event.stepId === "nap").map((event) => event.type);
    expect(napEvents).toEqual(["step_sleeping", "step_succeeded"]);
    expect(remote.requestsFor(`${id}:ship`)).toBe(1);
  });
});
