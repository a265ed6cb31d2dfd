import { describe, expect, it } from "vitest";
import { nextDeadlineAt } from "../../src/domain/machine";
import type { WaitForEvent } from "../../src/domain/language/schemas";
import { toWorkflowView } from "../../src/domain/machine/view";
import {
  claimed,
  deadlinesReached,
  describeHistory,
  eventReceived,
  expectTransition,
  plan,
  Run,
  step,
  stepOf,
  succeeded,
  T0,
  undoable,
  wait,
  waitStep,
  type TransitionCase,
} from "./builders";

const tick = deadlinesReached();
const TIMEOUT = 10_000;
const approval = (fields: Partial<WaitForEvent> = {}): WaitForEvent => ({ event: "approved", timeoutMs: TIMEOUT, ...fields });

/** Waits for `approved` from the start, then runs `b`. */
const waitsFirst = plan([waitStep("approval", approval()), step("b")]);
/** `a` runs first; the wait starts when `a` succeeds. */
const waitsAfterA = plan([step("a"), waitStep("approval", approval()), step("b")]);

describe("a step waiting for an event", () => {
  const rows: TransitionCase[] = [
    {
      name: "takes a matching event sent while it waits: the payload is its output and its dependents start",
      plan: waitsFirst,
      given: [wait(50)],
      when: eventReceived("approved", { payload: { by: "ops" } }),
      then: {
        status: "running",
        steps: { approval: "succeeded", b: "scheduled" },
        history: ["event_received", "event_consumed approval", "step_succeeded approval", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
        reply: { ok: true, consumed: true },
        check: (result) => {
          const waited = stepOf(result.state, "approval");
          expect(waited).toMatchObject({ output: { by: "ops" }, attempt: 0, attempts: [] });
          expect(waited.timerAt).toBeUndefined();
          expect(waited.waitingSince).toBeUndefined();
          expect(result.history[0]?.data).toEqual({ event: "approved", buffered: false, actor: "operator" });
          expect(result.history[1]?.data).toEqual({ event: "approved" });
          expect(result.state.inbox ?? []).toEqual([]);
        },
      },
    },
    {
      name: "has output null when the event carries no payload",
      plan: waitsFirst,
      when: eventReceived("approved"),
      then: {
        status: "running",
        steps: { approval: "succeeded" },
        history: ["event_received", "event_consumed approval", "step_succeeded approval", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
        check: (result) => expect(stepOf(result.state, "approval").output).toBeNull(),
      },
    },
    {
      name: "names the sender's id in the history of the event",
      plan: waitsFirst,
      when: eventReceived("approved", { id: "evt-1", payload: true }),
      then: {
        status: "running",
        steps: { approval: "succeeded" },
        history: ["event_received", "event_consumed approval", "step_succeeded approval", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
        check: (result) => {
          expect(result.history[0]?.data).toEqual({ event: "approved", id: "evt-1", buffered: false, actor: "operator" });
          expect(result.history[1]?.data).toEqual({ event: "approved", id: "evt-1" });
        },
      },
    },
    {
      name: "ignores an event of another name, which the inbox keeps",
      plan: waitsFirst,
      when: eventReceived("rejected", { payload: 1 }),
      then: {
        status: "running",
        steps: { approval: "waiting", b: "pending" },
        history: ["event_received"],
        effects: [],
        reply: { ok: true, consumed: false },
        check: (result) => {
          expect(result.state.inbox).toEqual([{ seq: 1, event: "rejected", payload: 1, receivedAt: T0 }]);
          expect(result.history[0]?.data).toEqual({ event: "rejected", buffered: true, actor: "operator" });
        },
      },
    },
    {
      name: "takes, as it starts, an event that arrived before it: early arrival is never lost",
      plan: waitsAfterA,
      given: [eventReceived("approved", { payload: { early: true }, id: "evt-early" }), claimed("a"), wait(30)],
      when: succeeded("a"),
      then: {
        status: "running",
        steps: { a: "succeeded", approval: "succeeded", b: "scheduled" },
        history: ["step_succeeded a#1", "step_waiting_for_event approval", "event_consumed approval", "step_succeeded approval", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
        check: (result) => {
          expect(stepOf(result.state, "approval").output).toEqual({ early: true });
          expect(result.history[2]?.data).toEqual({ event: "approved", id: "evt-early" });
          expect(result.state.inbox).toEqual([]);
        },
      },
    },
    {
      name: "takes the oldest of several buffered events of its name, and leaves the rest and other names in the inbox",
      plan: waitsAfterA,
      given: [
        eventReceived("approved", { payload: 1 }),
        wait(5),
        eventReceived("other", { payload: "x" }),
        wait(5),
        eventReceived("approved", { payload: 2 }),
        claimed("a"),
      ],
      when: succeeded("a"),
      then: {
        status: "running",
        steps: { approval: "succeeded", b: "scheduled" },
        history: ["step_succeeded a#1", "step_waiting_for_event approval", "event_consumed approval", "step_succeeded approval", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
        check: (result) => {
          expect(stepOf(result.state, "approval").output).toBe(1);
          expect(result.state.inbox).toEqual([
            { seq: 2, event: "other", payload: "x", receivedAt: T0 + 5 },
            { seq: 3, event: "approved", payload: 2, receivedAt: T0 + 10 },
          ]);
        },
      },
    },
    {
      name: "starts waiting with its timeout from the moment it is ready",
      plan: waitsAfterA,
      given: [claimed("a"), wait(250)],
      when: succeeded("a"),
      then: {
        status: "running",
        steps: { approval: "waiting", b: "pending" },
        history: ["step_succeeded a#1", "step_waiting_for_event approval"],
        effects: [],
        check: (result) => {
          expect(stepOf(result.state, "approval")).toMatchObject({ timerAt: T0 + 250 + TIMEOUT, waitingSince: T0 + 250, attempt: 0, attempts: [] });
          expect(result.history[1]?.data).toEqual({ event: "approved", timeoutAt: T0 + 250 + TIMEOUT });
          expect(nextDeadlineAt(result.state)).toBe(T0 + 250 + TIMEOUT);
        },
      },
    },
    {
      name: "is not an attempt: an agent's report naming it is stale",
      plan: waitsFirst,
      when: succeeded("approval"),
      then: {
        status: "running",
        steps: { approval: "waiting" },
        history: ["stale_report_rejected approval#1"],
        effects: [],
        changed: false,
        reply: { ok: false, code: "stale_attempt" },
      },
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));

  it("shows what it waits for and until when in the view, and no attempts", () => {
    const run = new Run(waitsFirst);
    run.send(eventReceived("other"));
    const view = toWorkflowView(run.state);
    expect(view.steps[0]).toEqual({ id: "approval", kind: "waitForEvent", dependsOn: [], status: "waiting", attempt: 0, waitingFor: { event: "approved", timeoutAt: T0 + TIMEOUT }, attempts: [] });
    expect(view.pendingEvents).toEqual([{ event: "other", receivedAt: T0 }]);
  });
});

describe("two steps waiting for the same event name", () => {
  /** `early` waits from the start; `late` comes first in the plan but waits only once `a` succeeded. */
  const twoWaits = plan([
    step("a"),
    waitStep("late", approval(), { dependsOn: ["a"] }),
    waitStep("early", approval(), { dependsOn: [] }),
  ]);

  it("give one event to one wait: the one that started waiting first, whatever the plan's order", () => {
    const run = new Run(twoWaits);
    run.play([claimed("a"), wait(10), succeeded("a"), wait(10)]);
    expect(run.step("early").waitingSince).toBe(T0);
    expect(run.step("late").waitingSince).toBe(T0 + 10);

    const first = run.send(eventReceived("approved", { payload: "first" }));
    expect(describeHistory(first.history)).toEqual(["event_received", "event_consumed early", "step_succeeded early"]);
    expect(run.step("late").status).toBe("waiting");

    const second = run.send(eventReceived("approved", { payload: "second" }));
    expect(describeHistory(second.history)).toEqual(["event_received", "event_consumed late", "step_succeeded late", "workflow_completed"]);
    expect(run.state.output).toEqual({ a: { ok: true }, early: "first", late: "second" });
  });

  it("that started at the same instant take events in the plan's order", () => {
    const run = new Run(plan([waitStep("w1", approval()), waitStep("w2", approval(), { dependsOn: [] })]));
    run.send(eventReceived("approved", { payload: 1 }));
    expect(run.step("w1")).toMatchObject({ status: "succeeded", output: 1 });
    expect(run.step("w2").status).toBe("waiting");
  });
});

describe("a wait that times out", () => {
  const rows: TransitionCase[] = [
    {
      name: "does not give up a moment before its timeout",
      plan: waitsFirst,
      given: [wait(TIMEOUT - 1)],
      when: tick,
      then: { status: "running", steps: { approval: "waiting" }, history: [], effects: [], changed: false },
    },
    {
      name: "fails by default (not retried) and the workflow's onFailure applies",
      plan: plan([waitStep("approval", approval()), step("b")], { onFailure: "fail" }),
      given: [wait(TIMEOUT + 20)],
      when: tick,
      then: {
        status: "failed",
        steps: { approval: "failed", b: "cancelled" },
        history: ["wait_timed_out approval", "step_failed approval", "workflow_failed"],
        effects: [],
        check: (result) => {
          const waited = stepOf(result.state, "approval");
          expect(waited.error).toEqual({ message: `no "approved" event within ${TIMEOUT} ms`, retryable: false, timeout: "wait_timeout" });
          expect(waited).toMatchObject({ attempt: 0, attempts: [] });
          expect(waited.timerAt).toBeUndefined();
          expect(result.history[0]?.data).toEqual({ event: "approved", onTimeout: "fail", timeoutAt: T0 + TIMEOUT, overdueMs: 20 });
          expect(result.history[1]?.data).toEqual({ kind: "waitForEvent", error: waited.error, final: true });
        },
      },
    },
    {
      name: "with onTimeout fail under compensate unwinds what came before",
      plan: plan([undoable("a"), waitStep("approval", approval({ onTimeout: "fail" })), step("b")]),
      given: [claimed("a"), succeeded("a"), wait(TIMEOUT)],
      when: tick,
      then: {
        status: "compensating",
        steps: { a: "compensating", approval: "failed", b: "cancelled" },
        history: ["wait_timed_out approval", "step_failed approval", "compensation_started", "step_scheduled a#2"],
        effects: ["enqueue a#2 compensation"],
      },
    },
    {
      name: "with onTimeout fail under escalate waits on an operator",
      plan: plan([waitStep("approval", approval()), step("b")], { onFailure: "escalate" }),
      given: [wait(TIMEOUT)],
      when: tick,
      then: {
        status: "needs_attention",
        steps: { approval: "failed", b: "pending" },
        history: ["wait_timed_out approval", "step_failed approval", "workflow_escalated approval"],
        effects: [],
      },
    },
    {
      name: "with onTimeout skip is skipped with output null, and its dependents run",
      plan: plan([waitStep("approval", approval({ onTimeout: "skip" })), step("b")]),
      given: [wait(TIMEOUT)],
      when: tick,
      then: {
        status: "running",
        steps: { approval: "skipped", b: "scheduled" },
        history: ["wait_timed_out approval", "step_skipped approval", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
        check: (result) => {
          const waited = stepOf(result.state, "approval");
          expect(waited.output).toBeNull();
          expect(waited.timerAt).toBeUndefined();
          expect(result.history[0]?.data).toMatchObject({ onTimeout: "skip" });
          expect(result.history[1]?.data).toEqual({ reason: "wait_timed_out" });
          expect(result.state.completionOrder).toEqual([]);
        },
      },
    },
    {
      name: "with onTimeout skip as the last step lets the workflow complete",
      plan: plan([waitStep("approval", approval({ onTimeout: "skip" }))]),
      given: [wait(TIMEOUT)],
      when: tick,
      then: {
        status: "completed",
        steps: { approval: "skipped" },
        history: ["wait_timed_out approval", "step_skipped approval", "workflow_completed"],
        effects: [],
        check: (result) => expect(result.state.output).toEqual({ approval: null }),
      },
    },
    {
      name: "no longer takes its event: one that comes after the timeout is kept in the inbox",
      plan: plan([waitStep("approval", approval({ onTimeout: "skip" })), step("b")]),
      given: [wait(TIMEOUT), tick],
      when: eventReceived("approved", { payload: "late" }),
      then: {
        status: "running",
        steps: { approval: "skipped" },
        history: ["event_received"],
        effects: [],
        reply: { ok: true, consumed: false },
        check: (result) => {
          expect(stepOf(result.state, "approval").output).toBeNull();
          expect(result.state.inbox).toHaveLength(1);
        },
      },
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));

  describe("leaves nothing behind that breaks a later wait for the same name", () => {
    const twice = plan([waitStep("first", approval({ onTimeout: "skip" })), step("b"), waitStep("second", approval())]);

    it("a later wait takes an event sent while it waits", () => {
      const run = new Run(twice);
      run.play([wait(TIMEOUT), tick, claimed("b"), succeeded("b")]);
      expect(run.step("second")).toMatchObject({ status: "waiting", waitingSince: T0 + TIMEOUT, timerAt: T0 + 2 * TIMEOUT });

      const result = run.send(eventReceived("approved", { payload: "for second" }));
      expect(result.reply).toEqual({ ok: true, consumed: true });
      expect(run.step("second").output).toBe("for second");
      expect(run.step("first").output).toBeNull();
      expect(run.state.status).toBe("completed");
    });

    it("a later wait takes an event that arrived between the two waits", () => {
      const run = new Run(twice);
      run.play([wait(TIMEOUT), tick, claimed("b"), eventReceived("approved", { payload: "between" }), succeeded("b")]);
      expect(run.step("second")).toMatchObject({ status: "succeeded", output: "between" });
      expect(run.state.inbox).toEqual([]);
      expect(run.state.status).toBe("completed");
    });

    it("a later wait's own timeout counts from its own start", () => {
      const run = new Run(twice);
      run.play([wait(TIMEOUT), tick, claimed("b"), wait(100), succeeded("b"), wait(TIMEOUT - 1), tick]);
      expect(run.step("second").status).toBe("waiting");
      run.play([wait(1), tick]);
      expect(run.step("second").status).toBe("failed");
    });
  });
});
