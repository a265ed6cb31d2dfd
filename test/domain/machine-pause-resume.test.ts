import { describe, expect, it } from "vitest";
import { nextDeadlineAt } from "../../src/domain/machine";
import { QUEUE_CHECK_MS } from "../../src/domain/machine/queue-check";
import {
  cancelRequested,
  claimed,
  deadlinesReached,
  eventReceived,
  expectTransition,
  failed,
  failedPermanently,
  heartbeat,
  pauseRequested,
  plan,
  resumeRequested,
  Run,
  sleepStep,
  step,
  stepOf,
  succeeded,
  T0,
  terminateRequested,
  undoable,
  wait,
  waitStep,
  type Script,
  type TransitionCase,
} from "./builders";

const tick = deadlinesReached();
const pause = pauseRequested();
const resume = resumeRequested();

const twoSteps = plan([step("a"), step("b")]);
const napThenB = plan([sleepStep("nap", { durationMs: 1_000 }), step("b")]);
const approvalThenB = plan([waitStep("approval", { event: "approved", timeoutMs: 1_000 }), step("b")]);
/** `a` done, then `b` failed for good: unwinding, with `a`'s compensation queued. */
const UNWINDING: Script = [claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b")];
const undoThenB = plan([undoable("a"), step("b")]);

describe("pause", () => {
  const refused = (name: string, workflowPlan = twoSteps, given: Script, status: TransitionCase["then"]["status"]): TransitionCase => ({
    name,
    plan: workflowPlan,
    given,
    when: pause,
    then: { status, history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
  });

  const rows: TransitionCase[] = [
    {
      name: "pauses a running workflow and leaves its running attempt alone",
      plan: twoSteps,
      given: [claimed("a"), wait(10)],
      when: pause,
      then: {
        status: "paused",
        steps: { a: "running", b: "pending" },
        history: ["workflow_paused"],
        effects: [],
        reply: { ok: true },
        check: (result) => expect(result.state.pausedAt).toBe(T0 + 10),
      },
    },
    {
      name: "of a paused workflow is a no-op that keeps the first pausedAt",
      plan: twoSteps,
      given: [pause, wait(10)],
      when: pause,
      then: {
        status: "paused",
        history: [],
        effects: [],
        changed: false,
        reply: { ok: true, unchanged: true },
        check: (result) => expect(result.state.pausedAt).toBe(T0),
      },
    },
    refused("is refused while the workflow unwinds", undoThenB, UNWINDING, "compensating"),
    refused("is refused while the workflow waits on an operator", plan([step("a")], { onFailure: "escalate" }), [claimed("a"), failedPermanently("a")], "needs_attention"),
    refused("is refused once the workflow completed", twoSteps, [claimed("a"), succeeded("a"), claimed("b"), succeeded("b")], "completed"),
    refused("is refused once the workflow was terminated", twoSteps, [terminateRequested()], "terminated"),
  ];

  it.each(rows)("$name", (row) => expectTransition(row));
});

describe("a paused workflow", () => {
  const rows: TransitionCase[] = [
    {
      name: "records a running attempt's success, but dispatches none of its dependents",
      plan: twoSteps,
      given: [claimed("a"), pause],
      when: succeeded("a"),
      then: { status: "paused", steps: { a: "succeeded", b: "pending" }, history: ["step_succeeded a#1"], effects: [] },
    },
    {
      name: "holds a retry whose backoff has passed",
      plan: twoSteps,
      given: [claimed("a"), failed("a"), pause, wait(5_000)],
      when: tick,
      then: {
        status: "paused",
        steps: { a: "retrying" },
        history: [],
        effects: [],
        changed: false,
        check: (result) => expect(nextDeadlineAt(result.state)).toBeUndefined(),
      },
    },
    {
      name: "does not wake a sleep that fell due",
      plan: napThenB,
      given: [pause, wait(5_000)],
      when: tick,
      then: { status: "paused", steps: { nap: "sleeping", b: "pending" }, history: [], effects: [], changed: false },
    },
    {
      name: "does not time out a wait that fell due",
      plan: approvalThenB,
      given: [pause, wait(5_000)],
      when: tick,
      then: { status: "paused", steps: { approval: "waiting" }, history: [], effects: [], changed: false },
    },
    {
      name: "keeps an event a step waits for in the inbox instead of completing the wait",
      plan: approvalThenB,
      given: [pause],
      when: eventReceived("approved", { payload: "yes" }),
      then: {
        status: "paused",
        steps: { approval: "waiting", b: "pending" },
        history: ["event_received"],
        effects: [],
        reply: { ok: true, consumed: false },
        check: (result) => {
          expect(result.history[0]?.data).toEqual({ event: "approved", buffered: true, actor: "operator" });
          expect(result.state.inbox).toEqual([{ seq: 1, event: "approved", payload: "yes", receivedAt: T0 }]);
        },
      },
    },
    {
      name: "still supervises a running attempt's heartbeat (the retry it earns is held)",
      plan: twoSteps,
      given: [claimed("a"), pause, wait(1_000)],
      when: tick,
      then: {
        status: "paused",
        steps: { a: "retrying" },
        history: ["step_heartbeat_missed a#1", "step_retry_scheduled a#1"],
        effects: [],
        check: (result) => expect(nextDeadlineAt(result.state)).toBeUndefined(),
      },
    },
    {
      name: "still supervises a running attempt's start-to-close deadline",
      plan: plan([step("a", { timeouts: { startToCloseMs: 2_000, heartbeatMs: 10_000 } })]),
      given: [claimed("a"), pause, wait(2_000)],
      when: tick,
      then: { status: "paused", steps: { a: "retrying" }, history: ["step_timed_out a#1", "step_retry_scheduled a#1"], effects: [] },
    },
    {
      name: "still supervises a queued attempt's schedule-to-start deadline",
      plan: twoSteps,
      given: [pause, wait(500)],
      when: tick,
      then: { status: "paused", steps: { a: "retrying" }, history: ["step_timed_out a#1", "step_retry_scheduled a#1"], effects: [] },
    },
    {
      // Dispatched before the pause, it is under way like a running attempt: an agent may still take it.
      name: "lets an agent claim an attempt queued before the pause",
      plan: twoSteps,
      given: [pause],
      when: claimed("a"),
      then: { status: "paused", steps: { a: "running" }, history: ["step_started a#1"], effects: [], reply: { ok: true } },
    },
    {
      // Sending a lost message again starts no attempt (same number, no budget): it is that attempt going on.
      name: "sends the message of an attempt queued before the pause again when the queue lost it",
      plan: plan([step("a")], { defaults: { timeouts: { startToCloseMs: 5_000, heartbeatMs: 1_000 } } }),
      given: [pause, wait(QUEUE_CHECK_MS)],
      when: tick,
      then: { status: "paused", steps: { a: "scheduled" }, history: ["task_resent a#1"], effects: ["enqueue a#1 action"] },
    },
    {
      name: "lets a step that fails for good wait: no onFailure decision while paused",
      plan: undoThenB,
      given: [claimed("a"), succeeded("a"), claimed("b"), pause],
      when: failedPermanently("b"),
      then: {
        status: "paused",
        steps: { a: "succeeded", b: "failed" },
        history: ["step_failed b#1"],
        effects: [],
        check: (result) => {
          expect(result.state.compensation).toBeUndefined();
          expect(result.state.error).toBeUndefined();
        },
      },
    },
    {
      name: "lets a step whose last attempt timed out wait too",
      plan: plan([step("a", { retry: { maxAttempts: 1 } })], { onFailure: "fail" }),
      given: [claimed("a"), pause, wait(1_000)],
      when: tick,
      then: { status: "paused", steps: { a: "failed" }, history: ["step_heartbeat_missed a#1", "step_failed a#1"], effects: [] },
    },
    {
      name: "still times out as a whole, and unwinds",
      plan: plan([undoable("a"), step("b")], { timeoutMs: 2_000 }),
      given: [claimed("a"), succeeded("a"), pause, wait(2_000)],
      when: tick,
      then: {
        status: "compensating",
        steps: { a: "compensating", b: "cancelled" },
        history: ["workflow_timed_out", "compensation_started", "step_scheduled a#2"],
        effects: ["enqueue a#2 compensation"],
        check: (result) => expect(result.state.pausedAt).toBeUndefined(),
      },
    },
    {
      name: "still times out as a whole under onFailure fail",
      plan: plan([sleepStep("nap", { durationMs: 500 }), step("b")], { timeoutMs: 2_000, onFailure: "fail" }),
      given: [pause, wait(2_000)],
      when: tick,
      then: { status: "failed", steps: { nap: "cancelled", b: "cancelled" }, history: ["workflow_timed_out", "workflow_failed"], effects: [] },
    },
    {
      name: "can be cancelled, which unwinds it and ends the pause",
      plan: undoThenB,
      given: [claimed("a"), succeeded("a"), pause],
      when: cancelRequested(),
      then: {
        status: "compensating",
        steps: { a: "compensating", b: "cancelled" },
        history: ["operator_action", "compensation_started", "step_scheduled a#2"],
        effects: ["enqueue a#2 compensation"],
        check: (result) => expect(result.state.pausedAt).toBeUndefined(),
      },
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));

  it("leaves its sleep, wait and retry timers out of its next deadline, but not its attempts' deadlines or its own", () => {
    const mixed = plan(
      [
        step("busy"),
        step("flaky", { dependsOn: [] }),
        sleepStep("nap", { durationMs: 2_000 }, { dependsOn: [] }),
        waitStep("approval", { event: "approved", timeoutMs: 3_000 }, { dependsOn: [] }),
      ],
      { timeoutMs: 60_000 },
    );
    const run = new Run(mixed).play([claimed("busy"), wait(200), heartbeat("busy"), claimed("flaky"), failed("flaky")]);
    expect(nextDeadlineAt(run.state)).toBe(T0 + 300);

    run.send(pause);
    expect(nextDeadlineAt(run.state)).toBe(T0 + 1_200);
    run.send(succeeded("busy"));
    expect(nextDeadlineAt(run.state)).toBe(T0 + 60_000);

    run.send(resume);
    expect(nextDeadlineAt(run.state)).toBe(T0 + 300);
  });
});

describe("resume", () => {
  const rows: TransitionCase[] = [
    {
      name: "is refused for a running workflow",
      plan: twoSteps,
      when: resume,
      then: { status: "running", history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
    },
    {
      name: "is refused for an ended workflow",
      plan: twoSteps,
      given: [terminateRequested()],
      when: resume,
      then: { status: "terminated", history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
    },
    {
      name: "with nothing due only makes the workflow running again",
      plan: twoSteps,
      given: [claimed("a"), pause, wait(750)],
      when: resume,
      then: {
        status: "running",
        steps: { a: "running" },
        history: ["workflow_resumed"],
        effects: [],
        reply: { ok: true },
        check: (result) => {
          expect(result.history[0]?.data).toEqual({ pausedMs: 750, actor: "operator" });
          expect(result.state.pausedAt).toBeUndefined();
        },
      },
    },
    {
      name: "dispatches the steps that became ready while paused",
      plan: twoSteps,
      given: [claimed("a"), pause, succeeded("a")],
      when: resume,
      then: { status: "running", steps: { a: "succeeded", b: "scheduled" }, history: ["workflow_resumed", "step_scheduled b#1"], effects: ["enqueue b#1 action"] },
    },
    {
      name: "completes a workflow whose steps all finished while paused",
      plan: twoSteps,
      given: [claimed("a"), succeeded("a"), claimed("b"), pause, succeeded("b")],
      when: resume,
      then: { status: "completed", history: ["workflow_resumed", "workflow_completed"], effects: [] },
    },
    {
      name: "starts a retry whose backoff passed while paused",
      plan: twoSteps,
      given: [claimed("a"), failed("a"), pause, wait(5_000), tick],
      when: resume,
      then: { status: "running", steps: { a: "scheduled" }, history: ["workflow_resumed", "step_scheduled a#2"], effects: ["enqueue a#2 action"] },
    },
    {
      name: "wakes a sleep that fell due while paused, and its dependents start",
      plan: napThenB,
      given: [pause, wait(5_000), tick],
      when: resume,
      then: {
        status: "running",
        steps: { nap: "succeeded", b: "scheduled" },
        history: ["workflow_resumed", "step_succeeded nap", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
        check: (result) => expect(stepOf(result.state, "nap").output).toEqual({ sleptUntil: T0 + 1_000 }),
      },
    },
    {
      name: "leaves a sleep that is not due yet asleep",
      plan: napThenB,
      given: [pause, wait(999)],
      when: resume,
      then: { status: "running", steps: { nap: "sleeping" }, history: ["workflow_resumed"], effects: [] },
    },
    {
      name: "applies a wait's timeout that fell due while paused",
      plan: plan([waitStep("approval", { event: "approved", timeoutMs: 1_000, onTimeout: "skip" }), step("b")]),
      given: [pause, wait(5_000)],
      when: resume,
      then: {
        status: "running",
        steps: { approval: "skipped", b: "scheduled" },
        history: ["workflow_resumed", "wait_timed_out approval", "step_skipped approval", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
      },
    },
    {
      name: "hands buffered events to their waits first, before looking at the waits' timeouts",
      plan: approvalThenB,
      given: [pause, eventReceived("approved", { payload: "yes", id: "e1" }), wait(5_000), tick],
      when: resume,
      then: {
        status: "running",
        steps: { approval: "succeeded", b: "scheduled" },
        history: ["workflow_resumed", "event_consumed approval", "step_succeeded approval", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
        check: (result) => {
          expect(stepOf(result.state, "approval").output).toBe("yes");
          expect(result.history[1]?.data).toEqual({ event: "approved", id: "e1" });
          expect(result.state.inbox).toEqual([]);
        },
      },
    },
    {
      name: "hands buffered events out oldest first, to the waits that wait longest",
      plan: plan([
        step("a"),
        waitStep("late", { event: "approved", timeoutMs: 60_000 }, { dependsOn: ["a"] }),
        waitStep("early", { event: "approved", timeoutMs: 60_000 }, { dependsOn: [] }),
      ]),
      given: [claimed("a"), wait(10), succeeded("a"), pause, eventReceived("approved", { payload: 1 }), eventReceived("approved", { payload: 2 })],
      when: resume,
      then: {
        status: "completed",
        history: ["workflow_resumed", "event_consumed early", "step_succeeded early", "event_consumed late", "step_succeeded late", "workflow_completed"],
        effects: [],
        check: (result) => expect(result.state.output).toMatchObject({ early: 1, late: 2 }),
      },
    },
    {
      name: "applies onFailure fail to a step that failed for good while paused",
      plan: plan([step("a"), step("b")], { onFailure: "fail" }),
      given: [claimed("a"), pause, failedPermanently("a")],
      when: resume,
      then: {
        status: "failed",
        steps: { a: "failed", b: "cancelled" },
        history: ["workflow_resumed", "workflow_failed"],
        effects: [],
        check: (result) => expect(result.state.error).toEqual({ message: 'step "a" failed: HTTP 422' }),
      },
    },
    {
      name: "applies onFailure compensate to a step that failed for good while paused",
      plan: undoThenB,
      given: [claimed("a"), succeeded("a"), claimed("b"), pause, failedPermanently("b")],
      when: resume,
      then: {
        status: "compensating",
        steps: { a: "compensating", b: "failed" },
        history: ["workflow_resumed", "compensation_started", "step_scheduled a#2"],
        effects: ["enqueue a#2 compensation"],
      },
    },
    {
      name: "applies onFailure escalate to a step that failed for good while paused",
      plan: plan([step("a"), step("b")], { onFailure: "escalate" }),
      given: [claimed("a"), pause, failedPermanently("a")],
      when: resume,
      then: { status: "needs_attention", steps: { a: "failed", b: "pending" }, history: ["workflow_resumed", "workflow_escalated a"], effects: [] },
    },
    {
      name: "applies onFailure to a wait that failed for good (timed out while paused)",
      plan: plan([waitStep("approval", { event: "approved", timeoutMs: 1_000 })], { onFailure: "fail" }),
      given: [pause, wait(1_000)],
      when: resume,
      then: {
        status: "failed",
        steps: { approval: "failed" },
        history: ["workflow_resumed", "wait_timed_out approval", "step_failed approval", "workflow_failed"],
        effects: [],
      },
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));
});
