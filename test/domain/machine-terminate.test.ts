import { describe, expect, it } from "vitest";
import { nextDeadlineAt } from "../../src/domain/machine";
import {
  claimed,
  eventReceived,
  expectTransition,
  failed,
  failedPermanently,
  heartbeat,
  pauseRequested,
  plan,
  sleepStep,
  step,
  stepOf,
  succeeded,
  T0,
  terminateRequested,
  undoable,
  wait,
  waitStep,
  type TransitionCase,
} from "./builders";

const pause = pauseRequested();

const twoSteps = plan([step("a"), step("b")]);
const approvalThenB = plan([waitStep("approval", { event: "approved", timeoutMs: 1_000 }), step("b")]);

describe("terminate", () => {
  const threeUndoable = plan([undoable("a"), undoable("b"), undoable("c")]);
  const terminated = (steps: TransitionCase["then"]["steps"], extra: Partial<TransitionCase["then"]> = {}): TransitionCase["then"] => ({
    status: "terminated",
    steps,
    history: ["workflow_terminated"],
    effects: [],
    reply: { ok: true },
    ...extra,
  });

  const rows: TransitionCase[] = [
    {
      name: "ends a running workflow at once: fences what runs, cancels what waits and compensates nothing",
      plan: threeUndoable,
      given: [claimed("a"), succeeded("a"), claimed("b"), wait(10)],
      when: terminateRequested(),
      then: terminated(
        { a: "succeeded", b: "cancelled", c: "cancelled" },
        {
          check: (result) => {
            const { state } = result;
            expect(state.error).toEqual({ message: "terminated by an operator" });
            expect(state.endedAt).toBe(T0 + 10);
            expect(state.compensation).toBeUndefined();
            expect(stepOf(state, "b").attempts[0]).toMatchObject({ status: "cancelled", endedAt: T0 + 10 });
            expect(result.history[0]?.data).toEqual({ actor: "operator" });
            expect(nextDeadlineAt(state)).toBeUndefined();
          },
        },
      ),
    },
    {
      name: "keeps the operator's reason as the workflow's error",
      plan: threeUndoable,
      when: terminateRequested("duplicate order"),
      then: terminated(
        { a: "cancelled" },
        {
          check: (result) => {
            expect(result.state.error).toEqual({ message: "duplicate order" });
            expect(result.history[0]?.data).toEqual({ actor: "operator", reason: "duplicate order" });
          },
        },
      ),
    },
    {
      name: "ends a paused workflow",
      plan: twoSteps,
      given: [claimed("a"), pause],
      when: terminateRequested(),
      then: terminated({ a: "cancelled", b: "cancelled" }, { check: (result) => expect(result.state.pausedAt).toBeUndefined() }),
    },
    {
      name: "stops an unwinding workflow where it is: the compensation in flight is fenced, nothing more is undone",
      plan: plan([undoable("a"), undoable("b"), step("c")]),
      given: [claimed("a"), succeeded("a"), claimed("b"), succeeded("b"), claimed("c"), failedPermanently("c"), claimed("b", 2)],
      when: terminateRequested(),
      then: terminated(
        { a: "succeeded", b: "cancelled", c: "failed" },
        { check: (result) => expect(stepOf(result.state, "b").attempts[1]).toMatchObject({ kind: "compensation", status: "cancelled" }) },
      ),
    },
    {
      name: "ends a workflow that waits on an operator",
      plan: plan([step("a"), step("b", { dependsOn: [] })], { onFailure: "escalate" }),
      given: [claimed("a"), failedPermanently("a")],
      when: terminateRequested(),
      then: terminated({ a: "failed", b: "cancelled" }),
    },
    {
      name: "cancels sleeping and waiting steps and their timers",
      plan: plan([sleepStep("nap", { durationMs: 1_000 }), waitStep("approval", { event: "approved", timeoutMs: 1_000 }, { dependsOn: [] })]),
      when: terminateRequested(),
      then: terminated(
        { nap: "cancelled", approval: "cancelled" },
        {
          check: (result) => {
            for (const id of ["nap", "approval"]) {
              expect(stepOf(result.state, id).timerAt).toBeUndefined();
              expect(stepOf(result.state, id).waitingSince).toBeUndefined();
            }
          },
        },
      ),
    },
    {
      name: "is refused once the workflow completed",
      plan: twoSteps,
      given: [claimed("a"), succeeded("a"), claimed("b"), succeeded("b")],
      when: terminateRequested(),
      then: { status: "completed", history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
    },
    {
      name: "is refused once the workflow was terminated",
      plan: twoSteps,
      given: [terminateRequested()],
      when: terminateRequested("again"),
      then: { status: "terminated", history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));

  const lateRows: TransitionCase[] = [
    {
      name: "answers a fenced attempt's late completion with gone",
      plan: twoSteps,
      given: [claimed("a"), terminateRequested()],
      when: succeeded("a"),
      then: { status: "terminated", history: [], effects: [], changed: false, reply: { ok: false, code: "gone" } },
    },
    {
      name: "answers a fenced attempt's late failure with gone",
      plan: twoSteps,
      given: [claimed("a"), terminateRequested()],
      when: failed("a"),
      then: { status: "terminated", history: [], effects: [], changed: false, reply: { ok: false, code: "gone" } },
    },
    {
      name: "refuses the claim of an attempt still queued when it was terminated",
      plan: twoSteps,
      given: [terminateRequested()],
      when: claimed("a"),
      then: { status: "terminated", history: [], effects: [], changed: false, reply: { ok: false, code: "gone" } },
    },
    {
      name: "tells a fenced attempt's heartbeat to stop",
      plan: twoSteps,
      given: [claimed("a"), terminateRequested()],
      when: heartbeat("a"),
      then: { status: "terminated", history: [], effects: [], changed: false, reply: { ok: true, cancelRequested: true } },
    },
    {
      name: "refuses an event for the terminated workflow",
      plan: approvalThenB,
      given: [terminateRequested()],
      when: eventReceived("approved"),
      then: { status: "terminated", history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
    },
  ];

  it.each(lateRows)("$name", (row) => expectTransition(row));
});
