import { describe, expect, it } from "vitest";
import type { ClaimedTask } from "../../src/domain/machine";
import { toWorkflowView } from "../../src/domain/machine/view";
import {
  cancelRequested,
  claimed,
  deadlinesReached,
  describeHistory,
  expectTransition,
  failed,
  failedPermanently,
  pauseRequested,
  plan,
  redriveRequested,
  Run,
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
const redrive = redriveRequested();

/** `a` succeeded with a charge id, `b` failed for good, `c` never ran: the workflow failed. */
const failing = plan([undoable("a"), step("b"), step("c")], { onFailure: "fail" });
const B_FAILED: Script = [claimed("a"), succeeded("a", 1, { id: "ch_1" }), claimed("b"), failedPermanently("b"), wait(1_000)];

/** `a` succeeded and was compensated by a cancel: the workflow ended cancelled. */
const undoThenB = plan([undoable("a"), step("b")]);
const A_UNDONE: Script = [claimed("a"), succeeded("a"), cancelRequested(), claimed("a", 2), succeeded("a", 2), wait(1_000)];

/** The Idempotency-Key an agent gets for the step's current attempt. */
function keyOf(run: Run, stepId: string): string {
  const reply = run.send(claimed(stepId, run.step(stepId).attempt)).reply;
  if (!reply.ok || !("task" in reply)) throw new Error(`claim of ${stepId} refused: ${JSON.stringify(reply)}`);
  return (reply.task as ClaimedTask).idempotencyKey;
}

describe("redrive", () => {
  const rows: TransitionCase[] = [
    {
      name: "runs a failed workflow again from the step that failed, keeping the outputs of the steps that succeeded",
      plan: failing,
      given: B_FAILED,
      when: redrive,
      then: {
        status: "running",
        steps: { a: "succeeded", b: "scheduled", c: "pending" },
        history: ["workflow_redriven", "step_scheduled b#2"],
        effects: ["enqueue b#2 action"],
        reply: { ok: true },
        check: (result) => {
          const { state } = result;
          expect(result.history[0]?.data).toEqual({ steps: ["b", "c"], redriveCount: 1, actor: "operator" });
          expect(stepOf(state, "a")).toMatchObject({ status: "succeeded", output: { id: "ch_1" }, attempt: 1 });
          const b = stepOf(state, "b");
          expect(b).toMatchObject({ attempt: 2, budgetUsed: 1 });
          expect(b.error).toBeUndefined();
          expect(b.attempts.map((attempt) => attempt.status)).toEqual(["failed", "scheduled"]);
          expect(b.keyRound).toBeUndefined();
          expect(state.redriveCount).toBe(1);
          expect(state.completionOrder).toEqual(["a"]);
          for (const field of ["error", "endedAt", "output", "compensation"] as const) expect(state[field]).toBeUndefined();
        },
      },
    },
    {
      name: "leaves the attempts from before it fenced: a late report from one is stale",
      plan: failing,
      given: [...B_FAILED, redrive],
      when: succeeded("b", 1),
      then: {
        status: "running",
        steps: { b: "scheduled" },
        history: ["stale_report_rejected b#1"],
        effects: [],
        changed: false,
        reply: { ok: false, code: "stale_attempt" },
      },
    },
    {
      name: "runs a terminated workflow again, starting the step that was fenced",
      plan: plan([step("a"), step("b")]),
      given: [claimed("a"), terminateRequested()],
      when: redrive,
      then: {
        status: "running",
        steps: { a: "scheduled", b: "pending" },
        history: ["workflow_redriven", "step_scheduled a#2"],
        effects: ["enqueue a#2 action"],
        check: (result) => expect(result.history[0]?.data).toEqual({ steps: ["a", "b"], redriveCount: 1, actor: "operator" }),
      },
    },
    {
      name: "runs a cancelled workflow again, including the steps that were compensated",
      plan: undoThenB,
      given: A_UNDONE,
      when: redrive,
      then: {
        status: "running",
        steps: { a: "scheduled", b: "pending" },
        history: ["workflow_redriven", "step_scheduled a#3"],
        effects: ["enqueue a#3 action"],
        check: (result) => {
          const a = stepOf(result.state, "a");
          expect(a).toMatchObject({ keyRound: 1, budgetUsed: 1 });
          expect(a.output).toBeUndefined();
          expect(result.state.completionOrder).toEqual([]);
        },
      },
    },
    {
      name: "with fromStep re-runs that step and everything downstream of it, whatever their status",
      plan: plan([step("a"), step("b"), step("c"), step("d", { dependsOn: ["a"] })], { onFailure: "fail" }),
      given: [claimed("a"), succeeded("a"), claimed("b"), succeeded("b"), claimed("d"), succeeded("d"), claimed("c"), failedPermanently("c")],
      when: redriveRequested("b"),
      then: {
        status: "running",
        steps: { a: "succeeded", b: "scheduled", c: "pending", d: "succeeded" },
        history: ["workflow_redriven", "step_scheduled b#2"],
        effects: ["enqueue b#2 action"],
        check: (result) => {
          const { state } = result;
          expect(result.history[0]?.data).toEqual({ fromStep: "b", steps: ["b", "c"], redriveCount: 1, actor: "operator" });
          expect(stepOf(state, "b").keyRound).toBe(1);
          expect(stepOf(state, "c").keyRound).toBeUndefined();
          expect(stepOf(state, "b").output).toBeUndefined();
          expect(state.completionOrder).toEqual(["a", "d"]);
        },
      },
    },
    {
      name: "with fromStep on a skipped step evaluates its when again, with no new key (it never ran)",
      plan: plan([step("a"), step("b", { when: "{{ steps.a.output.go }}" }), step("c")], { onFailure: "fail" }),
      given: [claimed("a"), succeeded("a", 1, { go: false }), claimed("c"), failedPermanently("c")],
      when: redriveRequested("b"),
      then: {
        status: "running",
        steps: { a: "succeeded", b: "skipped", c: "scheduled" },
        history: ["workflow_redriven", "step_skipped b", "step_scheduled c#2"],
        effects: ["enqueue c#2 action"],
        check: (result) => expect(stepOf(result.state, "b").keyRound).toBeUndefined(),
      },
    },
    {
      name: "gives a step that used up its attempts a fresh budget",
      plan: plan([step("a", { retry: { maxAttempts: 2 } })], { onFailure: "fail" }),
      given: [claimed("a"), failed("a"), wait(100), tick, claimed("a", 2), failed("a", 2)],
      when: redrive,
      then: {
        status: "running",
        steps: { a: "scheduled" },
        history: ["workflow_redriven", "step_scheduled a#3"],
        effects: ["enqueue a#3 action"],
        check: (result) => expect(stepOf(result.state, "a")).toMatchObject({ attempt: 3, budgetUsed: 1 }),
      },
    },
    {
      name: "restarts the workflow's timeout from the redrive",
      plan: plan([step("a")], { timeoutMs: 10_000, onFailure: "fail" }),
      given: [wait(10_000), tick, wait(50_000)],
      when: redrive,
      then: {
        status: "running",
        steps: { a: "scheduled" },
        history: ["workflow_redriven", "step_scheduled a#2"],
        effects: ["enqueue a#2 action"],
        check: (result, before) => {
          expect(before.deadlineAt).toBe(T0 + 10_000);
          expect(result.state.deadlineAt).toBe(T0 + 70_000);
        },
      },
    },
    {
      name: "starts a wait that timed out waiting again, with a new timeout",
      plan: plan([waitStep("approval", { event: "approved", timeoutMs: 1_000 })], { onFailure: "fail" }),
      given: [wait(1_000), tick, wait(5_000)],
      when: redrive,
      then: {
        status: "running",
        steps: { approval: "waiting" },
        history: ["workflow_redriven", "step_waiting_for_event approval"],
        effects: [],
        check: (result) => expect(stepOf(result.state, "approval")).toMatchObject({ timerAt: T0 + 7_000, waitingSince: T0 + 6_000 }),
      },
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));

  const refused = (name: string, workflowPlan: TransitionCase["plan"], given: Script, status: TransitionCase["then"]["status"], code = "conflict"): TransitionCase => ({
    name,
    plan: workflowPlan,
    given,
    when: redrive,
    then: { status, history: [], effects: [], changed: false, reply: { ok: false, code } },
  });
  const refusals: TransitionCase[] = [
    refused("of a completed workflow is refused", plan([step("a")]), [claimed("a"), succeeded("a")], "completed"),
    refused("of a compensated workflow is refused", undoThenB, [claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b"), claimed("a", 2), succeeded("a", 2)], "compensated"),
    refused("of a running workflow is refused", plan([step("a")]), [], "running"),
    refused("of a paused workflow is refused", plan([step("a")]), [pauseRequested()], "paused"),
    refused("of an unwinding workflow is refused", undoThenB, [claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b")], "compensating"),
    refused("of a workflow waiting on an operator is refused", plan([step("a")], { onFailure: "escalate" }), [claimed("a"), failedPermanently("a")], "needs_attention"),
    {
      name: "from a step the workflow does not have is not found",
      plan: failing,
      given: B_FAILED,
      when: redriveRequested("ghost"),
      then: { status: "failed", history: [], effects: [], changed: false, reply: { ok: false, code: "not_found" } },
    },
  ];

  it.each(refusals)("$name", (row) => expectTransition(row));
});

describe("the Idempotency-Key of a redriven step", () => {
  it("stays <workflow>:<step> for a step that failed or was fenced: its effect may already have happened", () => {
    const run = new Run(failing, { id: "wf-key-kept" }).play([...B_FAILED, redrive]);
    expect(keyOf(run, "b")).toBe("wf-key-kept:b");
  });

  it("gets :redrive-<n> for a step that was compensated, for its action and its compensation alike", () => {
    const run = new Run(undoThenB, { id: "wf-key-undone" }).play([...A_UNDONE, redrive]);
    expect(keyOf(run, "a")).toBe("wf-key-undone:a:redrive-1");
    run.play([succeeded("a", 3), claimed("b", 2), failedPermanently("b", 2)]);
    expect(run.state.status).toBe("compensating");
    expect(keyOf(run, "a")).toBe("wf-key-undone:a:redrive-1:compensate");
  });

  it("gets :redrive-<n> for a succeeded step that fromStep re-runs", () => {
    const run = new Run(plan([step("a"), step("b")]), { id: "wf-key-rerun" }).play([claimed("a"), succeeded("a"), claimed("b"), terminateRequested()]);
    run.send(redriveRequested("a"));
    expect(keyOf(run, "a")).toBe("wf-key-rerun:a:redrive-1");
  });

  it("counts the redrives: the second redrive of a step compensated again gets :redrive-2", () => {
    const run = new Run(undoThenB, { id: "wf-key-twice" }).play([...A_UNDONE, redrive, claimed("a", 3), succeeded("a", 3), cancelRequested()]);
    run.play([claimed("a", 4), succeeded("a", 4)]);
    expect(run.state.status).toBe("cancelled");
    run.send(redrive);
    expect(run.state.redriveCount).toBe(2);
    expect(keyOf(run, "a")).toBe("wf-key-twice:a:redrive-2");
    expect(toWorkflowView(run.state).redriveCount).toBe(2);
  });

  it("keeps its :redrive-<n> when a re-run under it was fenced: that attempt may have taken effect", () => {
    // Undone, redriven (key :redrive-1), then terminated while the new attempt ran: the remote may have done the
    // work under :redrive-1, so a second redrive must ask again under that same key, not a new one.
    const run = new Run(undoThenB, { id: "wf-key-fenced" }).play([...A_UNDONE, redrive]);
    expect(keyOf(run, "a")).toBe("wf-key-fenced:a:redrive-1");
    run.send(terminateRequested());
    run.send(redrive);
    expect(describeHistory(run.log.slice(-2))).toEqual(["workflow_redriven", "step_scheduled a#4"]);
    expect(keyOf(run, "a")).toBe("wf-key-fenced:a:redrive-1");
  });
});
