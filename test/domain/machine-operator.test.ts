import { describe, expect, it } from "vitest";
import type { WorkflowPlan } from "../../src/domain/language/plan";
import type { WorkflowEvent } from "../../src/domain/machine";
import {
  cancelRequested,
  claimed,
  compensationRequested,
  deadlinesReached,
  expectTransition,
  failed,
  failedPermanently,
  plan,
  retryRequested,
  skipRequested,
  step,
  stepOf,
  succeeded,
  undoable,
  wait,
  type Script,
  type TransitionCase,
} from "./builders";

const tick = deadlinesReached();

const threeUndoable = plan([undoable("a"), undoable("b"), undoable("c")]);
/** `a` done, `b` in flight, `c` pending. */
const MIDWAY: Script = [claimed("a"), succeeded("a"), claimed("b")];

/** Escalating plan whose step `a` gets two attempts; both fail. */
const escalating = plan([step("a", { retry: { maxAttempts: 2 } }), step("b", { action: { type: "http", url: "https://remote.example/b", body: { ref: "{{ steps.a.output.id }}" } } })], {
  onFailure: "escalate",
});
const A_EXHAUSTED: Script = [claimed("a"), failed("a", 1), wait(100), tick, claimed("a", 2), failed("a", 2)];

/** `a` succeeded, then `b` failed; under escalate the workflow waits on an operator. */
const escalatingTail = plan([undoable("a"), step("b")], { onFailure: "escalate" });
const B_ESCALATED: Script = [claimed("a"), succeeded("a", 1, { n: 1 }), claimed("b"), failedPermanently("b")];

/** A compensation that gets one try: `b` fails, then undoing `a` fails too. */
const fragileUndo = plan([undoable("a", { retry: { maxAttempts: 1 } }), step("b")]);
const UNDO_FAILED: Script = [claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b"), claimed("a", 2), failed("a", 2)];

const cancelRows: TransitionCase[] = [
  {
    name: "cancel fences the running attempt, cancels pending steps and compensates, newest first",
    plan: threeUndoable,
    given: MIDWAY,
    when: cancelRequested(),
    then: {
      status: "compensating",
      steps: { a: "succeeded", b: "compensating", c: "cancelled" },
      history: ["operator_action", "compensation_started", "step_scheduled b#2"],
      effects: ["enqueue b#2 compensation"],
      reply: { ok: true },
      check: (result) => {
        expect(result.state.compensation).toEqual({ queue: ["b", "a"], endStatus: "cancelled" });
        expect(stepOf(result.state, "b").attempts[0]).toMatchObject({ status: "cancelled" });
        expect(result.history[0]?.data).toEqual({ action: "cancel", actor: "operator" });
      },
    },
  },
  {
    name: "a cancelled workflow ends cancelled once its last compensation succeeds",
    plan: threeUndoable,
    given: [...MIDWAY, cancelRequested(), claimed("b", 2), succeeded("b", 2), claimed("a", 2)],
    when: succeeded("a", 2),
    then: {
      status: "cancelled",
      steps: { a: "compensated", b: "compensated", c: "cancelled" },
      history: ["step_compensated a#2", "workflow_cancelled"],
      effects: [],
    },
  },
  {
    name: "cancel with nothing to compensate ends cancelled at once",
    plan: plan([step("a"), step("b")]),
    given: [claimed("a")],
    when: cancelRequested(),
    then: {
      status: "cancelled",
      steps: { a: "cancelled", b: "cancelled" },
      history: ["operator_action", "compensation_started", "workflow_cancelled"],
      effects: [],
      reply: { ok: true },
    },
  },
  {
    name: "cancel of a workflow waiting on an operator unwinds it and ends cancelled",
    plan: escalatingTail,
    given: B_ESCALATED,
    when: cancelRequested(),
    then: {
      status: "compensating",
      steps: { a: "compensating", b: "failed" },
      history: ["operator_action", "compensation_started", "step_scheduled a#2"],
      effects: ["enqueue a#2 compensation"],
      check: (result) => expect(result.state.compensation?.endStatus).toBe("cancelled"),
    },
  },
  {
    name: "a repeated cancel is accepted and changes nothing",
    plan: threeUndoable,
    given: [...MIDWAY, cancelRequested()],
    when: cancelRequested(),
    then: { status: "compensating", history: [], effects: [], changed: false, reply: { ok: true } },
  },
  {
    name: "cancel of a workflow that has ended is a conflict",
    plan: plan([step("a")]),
    given: [claimed("a"), succeeded("a")],
    when: cancelRequested(),
    then: { status: "completed", history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
  },
  {
    name: "cancel of a workflow already compensating after a failure is a conflict",
    plan: threeUndoable,
    given: [...MIDWAY, failedPermanently("b")],
    when: cancelRequested(),
    then: { status: "compensating", history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
  },
];

const retryRows: TransitionCase[] = [
  {
    name: "retry of a failed step starts a fresh attempt and resumes the workflow",
    plan: escalating,
    given: A_EXHAUSTED,
    when: retryRequested("a"),
    then: {
      status: "running",
      steps: { a: "scheduled", b: "pending" },
      history: ["operator_action a", "step_scheduled a#3"],
      effects: ["enqueue a#3 action"],
      reply: { ok: true },
      check: (result) => {
        const a = stepOf(result.state, "a");
        expect(a.budgetUsed).toBe(1);
        expect(a.error).toBeUndefined();
        expect(result.history[0]?.data).toEqual({ action: "retry_step", actor: "operator" });
      },
    },
  },
  {
    name: "a step retried by an operator has its whole attempt budget again",
    plan: escalating,
    given: [...A_EXHAUSTED, retryRequested("a"), claimed("a", 3)],
    when: failed("a", 3),
    then: { status: "running", steps: { a: "retrying" }, history: ["step_failed a#3", "step_retry_scheduled a#3"], effects: [] },
  },
  {
    name: "retry of a failed compensation runs that compensation again",
    plan: fragileUndo,
    given: UNDO_FAILED,
    when: retryRequested("a"),
    then: {
      status: "compensating",
      steps: { a: "compensating" },
      history: ["operator_action a", "step_scheduled a#3"],
      effects: ["enqueue a#3 compensation"],
    },
  },
  {
    name: "retry of a failed step other than the compensation that failed is a conflict",
    plan: fragileUndo,
    given: UNDO_FAILED,
    when: retryRequested("b"),
    then: { status: "needs_attention", history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
  },
  {
    name: "retry of a step that has not failed is a conflict",
    plan: escalatingTail,
    given: B_ESCALATED,
    when: retryRequested("a"),
    then: { status: "needs_attention", history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
  },
  {
    name: "retry of a step the workflow does not have is not found",
    plan: escalatingTail,
    given: B_ESCALATED,
    when: retryRequested("nope"),
    then: { status: "needs_attention", history: [], effects: [], changed: false, reply: { ok: false, code: "not_found" } },
  },
];

const skipRows: TransitionCase[] = [
  {
    name: "skip treats a failed step as succeeded and dispatches its dependents",
    plan: escalating,
    given: A_EXHAUSTED,
    when: skipRequested("a", { id: "manual-7" }),
    then: {
      status: "running",
      steps: { a: "skipped", b: "scheduled" },
      history: ["operator_action a", "step_scheduled b#1"],
      effects: ["enqueue b#1 action"],
      reply: { ok: true },
      check: (result) => {
        expect(stepOf(result.state, "a").output).toEqual({ id: "manual-7" });
        expect(stepOf(result.state, "a").error).toBeUndefined();
      },
    },
  },
  {
    name: "a dependent of a skipped step reads the output the operator gave",
    plan: escalating,
    given: [...A_EXHAUSTED, skipRequested("a", { id: "manual-7" })],
    when: claimed("b"),
    then: {
      status: "running",
      steps: { b: "running" },
      history: ["step_started b#1"],
      effects: [],
      reply: { ok: true, task: { action: { body: { ref: "manual-7" } } } },
    },
  },
  {
    name: "skip of the last step completes the workflow with the operator's output",
    plan: escalatingTail,
    given: B_ESCALATED,
    when: skipRequested("b", { n: 2 }),
    then: {
      status: "completed",
      steps: { a: "succeeded", b: "skipped" },
      history: ["operator_action b", "workflow_completed"],
      effects: [],
      check: (result) => expect(result.state.output).toEqual({ a: { n: 1 }, b: { n: 2 } }),
    },
  },
  {
    name: "skip without an output records null as the step's output",
    plan: escalatingTail,
    given: B_ESCALATED,
    when: skipRequested("b"),
    then: {
      status: "completed",
      history: ["operator_action b", "workflow_completed"],
      effects: [],
      check: (result) => expect(result.state.output).toEqual({ a: { n: 1 }, b: null }),
    },
  },
  {
    name: "skip of a failed compensation moves on to the next step to compensate",
    plan: plan([undoable("a"), undoable("b", { retry: { maxAttempts: 1 } }), step("c")]),
    given: [claimed("a"), succeeded("a"), claimed("b"), succeeded("b"), claimed("c"), failedPermanently("c"), claimed("b", 2), failed("b", 2)],
    when: skipRequested("b"),
    then: {
      status: "compensating",
      steps: { a: "compensating", b: "skipped", c: "failed" },
      history: ["operator_action b", "step_scheduled a#2"],
      effects: ["enqueue a#2 compensation"],
    },
  },
];

const compensateRows: TransitionCase[] = [
  {
    name: "compensate gives up on a workflow waiting on an operator and unwinds it",
    plan: escalatingTail,
    given: B_ESCALATED,
    when: compensationRequested(),
    then: {
      status: "compensating",
      steps: { a: "compensating", b: "failed" },
      history: ["operator_action", "compensation_started", "step_scheduled a#2"],
      effects: ["enqueue a#2 compensation"],
      reply: { ok: true },
      check: (result) => expect(result.state.compensation?.endStatus).toBe("compensated"),
    },
  },
  {
    name: "a workflow an operator gave up on ends compensated",
    plan: escalatingTail,
    given: [...B_ESCALATED, compensationRequested(), claimed("a", 2)],
    when: succeeded("a", 2),
    then: { status: "compensated", history: ["step_compensated a#2", "workflow_compensated"], effects: [] },
  },
  {
    name: "compensate after a failed compensation tries that compensation again with a fresh budget",
    plan: fragileUndo,
    given: UNDO_FAILED,
    when: compensationRequested(),
    then: {
      status: "compensating",
      steps: { a: "compensating" },
      history: ["operator_action", "step_scheduled a#3"],
      effects: ["enqueue a#3 compensation"],
      check: (result) => expect(stepOf(result.state, "a").budgetUsed).toBe(1),
    },
  },
];

describe("operator actions", () => {
  describe("cancel", () => it.each(cancelRows)("$name", (row) => expectTransition(row)));
  describe("retry", () => it.each(retryRows)("$name", (row) => expectTransition(row)));
  describe("skip", () => it.each(skipRows)("$name", (row) => expectTransition(row)));
  describe("compensate", () => it.each(compensateRows)("$name", (row) => expectTransition(row)));
});

const elsewhere: { state: string; plan: WorkflowPlan; given: Script }[] = [
  { state: "running", plan: plan([step("a"), step("b")]), given: [claimed("a"), failed("a")] },
  { state: "compensating", plan: threeUndoable, given: [...MIDWAY, failedPermanently("b")] },
  { state: "completed", plan: plan([step("a")]), given: [claimed("a"), succeeded("a")] },
  { state: "cancelled", plan: plan([step("a")]), given: [claimed("a"), cancelRequested()] },
];
const actions: { action: string; event: WorkflowEvent }[] = [
  { action: "retry", event: retryRequested("a") },
  { action: "skip", event: skipRequested("a", { id: "x" }) },
  { action: "compensate", event: compensationRequested() },
];
const conflictRows = elsewhere.flatMap(({ state, plan: workflowPlan, given }) =>
  actions.map(({ action, event }) => ({ state, action, workflowPlan, given, event })),
);

describe("operator actions outside needs_attention", () => {
  it.each(conflictRows)("refuses $action on a $state workflow as a conflict", ({ state, workflowPlan, given, event }) =>
    expectTransition({
      name: `${event.type} while ${state}`,
      plan: workflowPlan,
      given,
      when: event,
      then: { status: state as TransitionCase["then"]["status"], history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
    }),
  );
});
