import { afterEach, describe, expect, it, vi } from "vitest";
import { api, getWorkflow, historyOf, snapshot, start, startAs, waitForStatus, waitForStep } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { elapse } from "../helpers/time";
import { control, DAY, HOUR, sendEvent, sleepStep, stepOf, waitStep } from "../helpers/workflow-language";

afterEach(() => vi.restoreAllMocks());

const approval = (extra: Record<string, unknown> = {}, timeoutMs = DAY) => waitStep("approval", { event: "approved", timeoutMs }, extra);

describe("an event sent before its wait starts", () => {
  it("is kept in the inbox (consumed: false, listed in pendingEvents), then consumed when the wait starts, its payload the step's output", async () => {
    const { id } = await start({ name: "early-event", steps: [sleepStep("cool-off", { durationMs: HOUR }), approval()] });

    const sent = await sendEvent(id, { event: "approved", payload: { by: "ada" }, id: "approval-1" });

    expect(sent).toEqual({ status: 202, body: { consumed: false } });
    const buffered = await getWorkflow(id);
    expect(buffered.pendingEvents).toEqual([{ event: "approved", id: "approval-1", receivedAt: expect.any(Number) }]);
    expect(stepOf(buffered, "approval").status).toBe("pending");
    expect((await historyOf(id)).filter((event) => event.type === "event_received")).toEqual([
      expect.objectContaining({ data: { event: "approved", id: "approval-1", buffered: true, actor: "default" } }),
    ]);

    await elapse(id, HOUR);
    const workflow = await waitForStatus(id, "completed");

    expect(stepOf(workflow, "approval")).toMatchObject({ status: "succeeded", output: { by: "ada" }, attempts: [] });
    expect(workflow.pendingEvents).toEqual([]);
    const approvalEvents = (await historyOf(id)).filter((event) => event.stepId === "approval");
    expect(approvalEvents.map((event) => event.type)).toEqual(["step_waiting_for_event", "event_consumed", "step_succeeded"]);
    expect(approvalEvents[1]!.data).toEqual({ event: "approved", id: "approval-1" });
  });

  it("is consumed by the first wait for its name only: events of other names stay in the inbox", async () => {
    const { id } = await start({ name: "two-names", steps: [sleepStep("cool-off", { durationMs: HOUR }), approval()] });
    expect((await sendEvent(id, { event: "rejected", payload: { why: "no" } })).body).toEqual({ consumed: false });
    expect((await sendEvent(id, { event: "approved", payload: { n: 1 } })).body).toEqual({ consumed: false });
    expect((await sendEvent(id, { event: "approved", payload: { n: 2 } })).body).toEqual({ consumed: false });

    await elapse(id, HOUR);
    const workflow = await waitForStatus(id, "completed");

    // The oldest event of the name goes first.
    expect(stepOf(workflow, "approval").output).toEqual({ n: 1 });
    expect(workflow.pendingEvents.map((event: { event: string }) => event.event)).toEqual(["rejected", "approved"]);
  });
});

describe("an event sent to a step that is waiting for it", () => {
  it("is consumed at once (consumed: true) and its payload is the step's output, for the steps after it to read", async () => {
    const remote = mockRemote((call) => json({ got: call.body }));
    const { id } = await start({
      name: "late-event",
      defaults: FAST,
      steps: [approval(), { id: "ship", action: { type: "http", url: `${REMOTE}/ship`, body: { approver: "{{ steps.approval.output.by }}" } } }],
    });
    const waiting = stepOf(await getWorkflow(id), "approval");
    expect(waiting).toMatchObject({ status: "waiting", waitingFor: { event: "approved", timeoutAt: expect.any(Number) }, attempts: [] });
    expect(waiting.waitingFor!.timeoutAt).toBeGreaterThan(Date.now() + DAY - HOUR);

    const sent = await sendEvent(id, { event: "approved", payload: { by: "ada" } });

    expect(sent).toEqual({ status: 202, body: { consumed: true } });
    expect(stepOf(await getWorkflow(id), "approval")).toMatchObject({ status: "succeeded", output: { by: "ada" } });
    const workflow = await waitForStatus(id, "completed");
    expect(remote.callsTo("/ship")[0]?.body).toEqual({ approver: "ada" });
    expect(workflow.pendingEvents).toEqual([]);
    const history = await historyOf(id);
    expect(history.find((event) => event.type === "event_received")?.data).toEqual({ event: "approved", buffered: false, actor: "default" });
    expect(history.find((event) => event.type === "event_consumed")).toMatchObject({ stepId: "approval", data: { event: "approved" } });
  });

  it("gives the step null as its output when the event has no payload", async () => {
    const { id } = await start({ name: "no-payload", steps: [approval()] });
    expect((await sendEvent(id, { event: "approved" })).body).toEqual({ consumed: true });
    const workflow = await waitForStatus(id, "completed");
    expect(stepOf(workflow, "approval").output).toBeNull();
    expect(workflow.output).toEqual({ approval: null });
  });

  it("goes to the step that started waiting first when two wait for the same name", async () => {
    const { id } = await start({
      name: "two-waits",
      steps: [approval({ dependsOn: [] }), sleepStep("later", { durationMs: HOUR }, { dependsOn: [] }), waitStep("second", { event: "approved", timeoutMs: 2 * DAY }, { dependsOn: ["later"] })],
    });
    await elapse(id, HOUR);
    await waitForStep(id, "second", "waiting");

    expect((await sendEvent(id, { event: "approved", payload: { n: 1 } })).body).toEqual({ consumed: true });
    let workflow = await getWorkflow(id);
    expect(stepOf(workflow, "approval")).toMatchObject({ status: "succeeded", output: { n: 1 } });
    expect(stepOf(workflow, "second").status).toBe("waiting");

    expect((await sendEvent(id, { event: "approved", payload: { n: 2 } })).body).toEqual({ consumed: true });
    workflow = await waitForStatus(id, "completed");
    expect(stepOf(workflow, "second").output).toEqual({ n: 2 });
  });
});

describe("an event sent again with the same id", () => {
  it("gets 200 with the first answer and is delivered once, while a new id is a new event", async () => {
    const { id } = await start({ name: "dedupe", steps: [approval(), waitStep("again", { event: "approved", timeoutMs: DAY })] });

    const first = await sendEvent(id, { event: "approved", payload: { n: 1 }, id: "evt-1" });
    const repeated = await sendEvent(id, { event: "approved", payload: { n: 1 }, id: "evt-1" });

    expect(first).toEqual({ status: 202, body: { consumed: true } });
    expect(repeated).toEqual({ status: 200, body: first.body });
    // The repeat did not reach the second wait, nor wait in the inbox for it.
    const workflow = await getWorkflow(id);
    expect(stepOf(workflow, "approval").output).toEqual({ n: 1 });
    expect(stepOf(workflow, "again").status).toBe("waiting");
    expect(workflow.pendingEvents).toEqual([]);
    expect((await historyOf(id)).filter((event) => event.type === "event_consumed")).toHaveLength(1);

    expect(await sendEvent(id, { event: "approved", payload: { n: 2 }, id: "evt-2" })).toEqual({ status: 202, body: { consumed: true } });
    const completed = await waitForStatus(id, "completed");
    expect(stepOf(completed, "again").output).toEqual({ n: 2 });
    expect((await historyOf(id)).filter((event) => event.type === "event_consumed").map((event) => event.data.id)).toEqual(["evt-1", "evt-2"]);
  });

  it("gets 200 with the first answer while the first is still in the inbox, and the inbox keeps one copy, the first", async () => {
    const { id } = await start({ name: "dedupe-buffered", steps: [sleepStep("cool-off", { durationMs: HOUR }), approval(), waitStep("again", { event: "approved", timeoutMs: DAY })] });

    const first = await sendEvent(id, { event: "approved", payload: { n: 1 }, id: "evt-1" });
    const repeated = await sendEvent(id, { event: "approved", payload: { n: "changed" }, id: "evt-1" });

    expect(first).toEqual({ status: 202, body: { consumed: false } });
    expect(repeated).toEqual({ status: 200, body: { consumed: false } });
    expect((await getWorkflow(id)).pendingEvents).toHaveLength(1);

    await elapse(id, HOUR);
    await waitForStep(id, "again", "waiting");
    const workflow = await getWorkflow(id);
    expect(stepOf(workflow, "approval").output).toEqual({ n: 1 });
    expect(workflow.pendingEvents).toEqual([]);
    expect((await historyOf(id)).filter((event) => event.type === "event_consumed")).toHaveLength(1);
  });
});

describe("a wait step's compensation", () => {
  it("runs when a later step fails, reading the payload the wait received", async () => {
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/charge" ? json({ error: "declined" }, 402) : json({ ok: true })));
    const { id } = await start({
      name: "wait-compensated",
      defaults: FAST,
      steps: [
        approval({ compensate: { type: "http", url: `${REMOTE}/withdraw`, body: { approver: "{{ steps.approval.output.by }}" } } }),
        { id: "charge", action: { type: "http", url: `${REMOTE}/charge` } },
      ],
    });
    await sendEvent(id, { event: "approved", payload: { by: "ada" } });

    const workflow = await waitForStatus(id, "compensated");

    expect(stepOf(workflow, "approval").status).toBe("compensated");
    const withdrawals = remote.callsTo("/withdraw");
    expect(withdrawals).toHaveLength(1);
    expect(withdrawals[0]!.body).toEqual({ approver: "ada" });
    expect(withdrawals[0]!.headers["idempotency-key"]).toBe(`${id}:approval:compensate`);
  });
});

describe("a wait that times out", () => {
  it("with onTimeout fail: fails the step without a retry, and the workflow's onFailure applies (compensation)", async () => {
    const remote = mockRemote(() => json({ ref: "r-1" }));
    const { id } = await start({
      name: "wait-fails",
      defaults: FAST,
      steps: [
        { id: "reserve", action: { type: "http", url: `${REMOTE}/reserve` }, compensate: { type: "http", url: `${REMOTE}/release` } },
        waitStep("approval", { event: "approved", timeoutMs: HOUR, onTimeout: "fail" }),
      ],
    });
    await waitForStep(id, "approval", "waiting");

    await elapse(id, HOUR);
    const workflow = await waitForStatus(id, "compensated");

    expect(stepOf(workflow, "approval")).toMatchObject({ status: "failed", attempts: [], error: { timeout: "wait_timeout", retryable: false } });
    expect(stepOf(workflow, "reserve").status).toBe("compensated");
    expect(remote.callsTo("/release")).toHaveLength(1);
    const history = await historyOf(id);
    expect(history.find((event) => event.type === "wait_timed_out")).toMatchObject({ stepId: "approval", data: { event: "approved", onTimeout: "fail" } });
    expect(history.some((event) => event.type === "step_retry_scheduled" && event.stepId === "approval")).toBe(false);
    expect(history.some((event) => event.type === "compensation_started")).toBe(true);
  });

  it("fails by default (no onTimeout), and onFailure fail ends the workflow failed", async () => {
    const { id } = await start({ name: "wait-fails-by-default", onFailure: "fail", steps: [approval({}, HOUR)] });
    await elapse(id, HOUR);
    const workflow = await waitForStatus(id, "failed");
    expect(stepOf(workflow, "approval")).toMatchObject({ status: "failed", error: { timeout: "wait_timeout" } });
    expect(workflow.error.message).toContain("approval");
    expect((await historyOf(id)).find((event) => event.type === "wait_timed_out")?.data).toMatchObject({ event: "approved", onTimeout: "fail" });
  });

  it("with onTimeout skip: skips the step with output null, and the steps after it run", async () => {
    const remote = mockRemote((call) => json({ got: call.body }));
    const { id } = await start({
      name: "wait-skips",
      defaults: FAST,
      steps: [
        waitStep("approval", { event: "approved", timeoutMs: HOUR, onTimeout: "skip" }),
        { id: "ship", action: { type: "http", url: `${REMOTE}/ship`, body: { approval: "{{ steps.approval.output }}" } } },
      ],
    });

    await elapse(id, HOUR);
    const workflow = await waitForStatus(id, "completed");

    expect(stepOf(workflow, "approval")).toMatchObject({ status: "skipped", output: null, attempts: [] });
    expect(remote.callsTo("/ship")[0]?.body).toEqual({ approval: null });
    expect(workflow.output.approval).toBeNull();
    const history = await historyOf(id);
    expect(history.find((event) => event.type === "wait_timed_out")).toMatchObject({ stepId: "approval", data: { event: "approved", onTimeout: "skip" } });
    expect(history.find((event) => event.type === "step_skipped")).toMatchObject({ stepId: "approval", data: { reason: "wait_timed_out" } });
  });

  it("leaves nothing that breaks a later wait for the same name: the later wait consumes the next event", async () => {
    const { id } = await start({
      name: "wait-again",
      steps: [waitStep("first", { event: "approved", timeoutMs: HOUR, onTimeout: "skip" }), waitStep("second", { event: "approved", timeoutMs: DAY })],
    });

    await elapse(id, HOUR);
    const afterTimeout = await waitForStep(id, "second", "waiting");
    expect(stepOf(afterTimeout, "first").status).toBe("skipped");

    const sent = await sendEvent(id, { event: "approved", payload: { second: true } });

    expect(sent).toEqual({ status: 202, body: { consumed: true } });
    const workflow = await waitForStatus(id, "completed");
    expect(stepOf(workflow, "second")).toMatchObject({ status: "succeeded", output: { second: true } });
    expect(workflow.pendingEvents).toEqual([]);
  });
});

describe("an event the workflow cannot take", () => {
  it.each<[string, (id: string) => Promise<unknown>]>([
    ["completed", (id) => sendEvent(id, { event: "approved" })],
    ["terminated", (id) => control(id, "terminate")],
    ["cancelled", (id) => api("POST", `/v1/workflows/${id}/cancel`)],
  ])("is refused with 409 when the workflow has ended (%s), changing nothing", async (status, end) => {
    const { id } = await start({ name: "ended", steps: [approval()] });
    await end(id);
    await waitForStatus(id, status);
    const before = await snapshot("default", id);

    const refused = await sendEvent(id, { event: "approved", payload: { late: true }, id: "late-1" });

    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("conflict");
    expect(await snapshot("default", id)).toEqual(before);
  });

  it("is refused with 429 once 100 events wait unconsumed in the inbox, changing nothing", async () => {
    // Its own tenant, so the tenants' write limit (429 as well) cannot be what answers.
    const id = await startAs("gamma", { name: "full-inbox", steps: [approval()] });
    for (let i = 0; i < 100; i++) {
      const sent = await sendEvent(id, { event: "noise", payload: { i }, id: `noise-${i}` }, "gamma");
      expect(sent, `event ${i}`).toEqual({ status: 202, body: { consumed: false } });
    }
    const before = await snapshot("gamma", id);
    expect(before.workflow.pendingEvents).toHaveLength(100);

    const refused = await sendEvent(id, { event: "noise", payload: { i: 100 }, id: "noise-100" }, "gamma");

    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(await snapshot("gamma", id)).toEqual(before);
    // An event it already holds is no new event: sent again, it gets its first answer.
    expect(await sendEvent(id, { event: "noise", payload: { i: 5 }, id: "noise-5" }, "gamma")).toEqual({ status: 200, body: { consumed: false } });
    expect((await snapshot("gamma", id)).workflow.pendingEvents).toEqual(before.workflow.pendingEvents);
  });
});

describe("the workflow view", () => {
  it("always shows the inbox, empty when no event waits", async () => {
    const { id, workflow } = await start({ name: "view", steps: [approval()] });
    expect(workflow.pendingEvents).toEqual([]);
    expect((await getWorkflow(id)).pendingEvents).toEqual([]);
  });
});
