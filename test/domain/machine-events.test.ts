import { describe, expect, it } from "vitest";
import { MAX_INBOX_EVENTS } from "../../src/domain/machine";
import { toWorkflowView } from "../../src/domain/machine/view";
import {
  cancelRequested,
  claimed,
  describeHistory,
  eventReceived,
  expectTransition,
  failedPermanently,
  pauseRequested,
  plan,
  resumeRequested,
  Run,
  step,
  succeeded,
  T0,
  terminateRequested,
  undoable,
  wait,
  waitStep,
  type Script,
  type TransitionCase,
} from "./builders";

const noWait = plan([step("a")]);
const approvalThenB = plan([waitStep("approval", { event: "approved", timeoutMs: 60_000 }), step("b")]);
/** The inbox filled to its limit with events nobody waits for yet. */
const fill = (count = MAX_INBOX_EVENTS): Script => Array.from({ length: count }, (_, i) => eventReceived("later", { payload: i }));

describe("an event no step waits for", () => {
  const rows: TransitionCase[] = [
    {
      name: "is kept in the inbox, with when it arrived, and answered consumed: false",
      plan: noWait,
      given: [wait(25)],
      when: eventReceived("approved", { payload: { by: "ops" }, id: "evt-1" }),
      then: {
        status: "running",
        history: ["event_received"],
        effects: [],
        reply: { ok: true, consumed: false },
        check: (result) => {
          expect(result.state.inbox).toEqual([{ seq: 1, event: "approved", payload: { by: "ops" }, id: "evt-1", receivedAt: T0 + 25 }]);
          expect(result.state.nextEventSeq).toBe(2);
          expect(result.history[0]?.data).toEqual({ event: "approved", id: "evt-1", buffered: true, actor: "operator" });
        },
      },
    },
    {
      name: "without payload or id is kept without them",
      plan: noWait,
      when: eventReceived("approved"),
      then: {
        status: "running",
        history: ["event_received"],
        effects: [],
        check: (result) => expect(result.state.inbox).toEqual([{ seq: 1, event: "approved", receivedAt: T0 }]),
      },
    },
    {
      name: "joins the inbox after the ones before it, in the order they arrived",
      plan: noWait,
      given: [eventReceived("first"), wait(1), eventReceived("second")],
      when: eventReceived("first", { payload: "again" }),
      then: {
        status: "running",
        history: ["event_received"],
        effects: [],
        check: (result) => {
          expect(result.state.inbox?.map((entry) => [entry.seq, entry.event])).toEqual([
            [1, "first"],
            [2, "second"],
            [3, "first"],
          ]);
        },
      },
    },
    {
      name: "is kept while the workflow unwinds: its waits were cancelled",
      plan: plan([undoable("a"), waitStep("approval", { event: "approved", timeoutMs: 60_000 }, { dependsOn: [] })]),
      given: [claimed("a"), succeeded("a"), cancelRequested()],
      when: eventReceived("approved"),
      then: { status: "compensating", history: ["event_received"], effects: [], reply: { ok: true, consumed: false } },
    },
    {
      name: `is kept up to ${MAX_INBOX_EVENTS} unconsumed events`,
      plan: noWait,
      given: fill(MAX_INBOX_EVENTS - 1),
      when: eventReceived("later"),
      then: {
        status: "running",
        history: ["event_received"],
        effects: [],
        reply: { ok: true, consumed: false },
        check: (result) => expect(result.state.inbox).toHaveLength(MAX_INBOX_EVENTS),
      },
    },
    {
      name: `is refused as inbox_full past ${MAX_INBOX_EVENTS}, changing nothing`,
      plan: noWait,
      given: fill(),
      when: eventReceived("later"),
      then: {
        status: "running",
        history: [],
        effects: [],
        changed: false,
        reply: { ok: false, code: "inbox_full" },
        check: (result) => expect(result.state.inbox).toHaveLength(MAX_INBOX_EVENTS),
      },
    },
    {
      name: "is refused as inbox_full while paused and full too",
      plan: approvalThenB,
      given: [pauseRequested(), ...fill()],
      when: eventReceived("approved"),
      then: { status: "paused", history: [], effects: [], changed: false, reply: { ok: false, code: "inbox_full" } },
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));

  it("shows in the view's pendingEvents until a wait takes it", () => {
    const run = new Run(plan([step("a"), waitStep("approval", { event: "approved", timeoutMs: 60_000 })]));
    run.play([eventReceived("approved", { id: "evt-1", payload: { secret: "not shown" } }), wait(5), eventReceived("other")]);
    expect(toWorkflowView(run.state).pendingEvents).toEqual([
      { event: "approved", id: "evt-1", receivedAt: T0 },
      { event: "other", receivedAt: T0 + 5 },
    ]);
    run.play([claimed("a"), succeeded("a")]);
    expect(toWorkflowView(run.state).pendingEvents).toEqual([{ event: "other", receivedAt: T0 + 5 }]);
  });
});

describe("an event a step waits for", () => {
  const rows: TransitionCase[] = [
    {
      name: "is consumed at once even when the inbox is full: the limit is on what is kept",
      plan: approvalThenB,
      given: fill(),
      when: eventReceived("approved"),
      then: {
        status: "running",
        steps: { approval: "succeeded", b: "scheduled" },
        history: ["event_received", "event_consumed approval", "step_succeeded approval", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
        reply: { ok: true, consumed: true },
        check: (result) => expect(result.state.inbox).toHaveLength(MAX_INBOX_EVENTS),
      },
    },
    {
      name: "is kept instead while the workflow is paused",
      plan: approvalThenB,
      given: [pauseRequested()],
      when: eventReceived("approved"),
      then: { status: "paused", steps: { approval: "waiting" }, history: ["event_received"], effects: [], reply: { ok: true, consumed: false } },
    },
    {
      name: "is consumed by a wait in a workflow that waits on an operator for another branch",
      plan: plan([step("a"), waitStep("approval", { event: "approved", timeoutMs: 60_000 }, { dependsOn: [] })], { onFailure: "escalate" }),
      given: [claimed("a"), failedPermanently("a")],
      when: eventReceived("approved"),
      then: {
        status: "needs_attention",
        steps: { a: "failed", approval: "succeeded" },
        history: ["event_received", "event_consumed approval", "step_succeeded approval"],
        effects: [],
        reply: { ok: true, consumed: true },
      },
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));

  it("makes room in a full inbox when a wait takes one of the kept events", () => {
    const run = new Run(plan([step("a"), waitStep("approval", { event: "later", timeoutMs: 60_000 }), step("b")]));
    run.play(fill());
    expect(run.send(eventReceived("more")).reply).toMatchObject({ ok: false, code: "inbox_full" });
    run.play([claimed("a"), succeeded("a")]);
    expect(run.step("approval").output).toBe(0);
    expect(run.send(eventReceived("more")).reply).toEqual({ ok: true, consumed: false });
    expect(run.state.inbox?.at(-1)).toMatchObject({ seq: MAX_INBOX_EVENTS + 1, event: "more" });
  });

  it("sent while paused is handed over on resume, in the order events arrived", () => {
    const run = new Run(plan([waitStep("approval", { event: "approved", timeoutMs: 60_000 }), waitStep("shipping", { event: "shipped", timeoutMs: 60_000 })]));
    run.play([pauseRequested(), eventReceived("shipped", { payload: "s" }), eventReceived("approved", { payload: 1 }), eventReceived("approved", { payload: 2 })]);
    const resumed = run.send(resumeRequested());
    expect(describeHistory(resumed.history)).toEqual([
      "workflow_resumed",
      "event_consumed approval",
      "step_succeeded approval",
      "step_waiting_for_event shipping",
      "event_consumed shipping",
      "step_succeeded shipping",
      "workflow_completed",
    ]);
    expect(run.state.output).toEqual({ approval: 1, shipping: "s" });
    expect(run.state.inbox?.map((entry) => entry.payload)).toEqual([2]);
  });
});

describe("an event for an ended workflow", () => {
  const ended: [string, Script][] = [
    ["completed", [claimed("a"), succeeded("a")]],
    ["compensated", [claimed("a"), failedPermanently("a")]],
    ["cancelled", [cancelRequested()]],
    ["terminated", [terminateRequested()]],
  ];
  const rows: TransitionCase[] = ended.map(([status, given]) => ({
    name: `is refused as a conflict once it is ${status}`,
    plan: noWait,
    given,
    when: eventReceived("approved"),
    then: { status: status as TransitionCase["then"]["status"], history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
  }));

  it.each(rows)("$name", (row) => expectTransition(row));

  it("is refused for a failed workflow too", () => {
    const run = new Run(plan([step("a")], { onFailure: "fail" })).play([claimed("a"), failedPermanently("a")]);
    expect(run.state.status).toBe("failed");
    const result = run.send(eventReceived("approved"));
    expect(result.reply).toEqual({ ok: false, code: "conflict", message: "workflow has already ended (failed)" });
    expect(result.changed).toBe(false);
  });
});
