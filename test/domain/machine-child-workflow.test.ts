// The `workflow` step kind in the pure machine: its start asks for the child's start (an effect), the child's start
// and end arrive as events applied once (fenced by the child's id), a retry starts a fresh child, a parent that
// fences the step closes its open child as `onParentClose` says, and children nest at most 8 deep.
import { describe, expect, it } from "vitest";
import { commitPlan, type ChildEffect, type WorkflowEvent } from "../../src/domain/machine";
import { defaultChildId } from "../../src/domain/machine/steps/workflow";
import { diagnose } from "../../src/domain/machine/diagnosis";
import { toWorkflowView } from "../../src/domain/machine/view";
import type { StepInput } from "../../src/domain/language/schemas";
import { cancelRequested, deadlinesReached, describeEffects, describeHistory, plan, Run, step, T0, terminateRequested } from "./builders";

type ChildFields = NonNullable<StepInput["workflow"]>;

const shipping = (fields: Partial<ChildFields> = {}, stepFields: Partial<StepInput> = {}): StepInput => ({
  id: "ship",
  workflow: { definitionRef: { name: "shipping" }, input: { order: "{{ input.order }}" }, ...fields },
  ...stepFields,
});

const started = (childId: string, stepId = "ship", created = true): WorkflowEvent => ({ type: "ChildWorkflowStarted", stepId, childId, created });
const ended = (childId: string, status: "completed" | "failed" | "cancelled" | "terminated" | "compensated", fields: { output?: unknown; attempt?: number } = {}): WorkflowEvent => ({
  type: "ChildWorkflowEnded",
  parentId: "p",
  stepId: "ship",
  attempt: fields.attempt ?? 1,
  childId,
  status,
  ...(status === "completed" ? { output: fields.output ?? { tracking: "trk_1" } } : { error: { message: `step "label" failed: HTTP 422` } }),
});

const childStarts = (effects: ChildEffect[]) => effects.filter((effect) => effect.type === "StartChildWorkflow");
const closes = (effects: ChildEffect[]) => effects.filter((effect) => effect.type === "CloseChildWorkflow");

/** A parent `p` with input {order: 7}, its `ship` step a child workflow, then an action. */
function parent(child: StepInput = shipping(), options: { onFailure?: "fail" | "compensate" } = {}) {
  return new Run(plan([child, step("after")], options), { id: "p", input: { order: 7 } });
}

describe("a workflow step's start", () => {
  it("asks for the child's start as an effect, with its input rendered and the default id <parentId>:<stepId>", () => {
    const run = parent();
    expect(run.step("ship")).toMatchObject({ status: "waiting", attempt: 1, child: { id: "p:ship", status: "starting" } });
    expect(describeHistory(run.log)).toEqual(["workflow_started", "step_waiting_for_child ship#1"]);
    expect(run.childEffects).toEqual([
      { type: "StartChildWorkflow", stepId: "ship", attempt: 1, start: { id: "p:ship", definitionRef: { name: "shipping" }, input: { order: 7 } }, depth: 1 },
    ]);
    expect(describeEffects(run.effects)).toEqual([]);
    expect(defaultChildId("p", "ship")).toBe("p:ship");
  });

  it("renders a templated id, and carries an inline definition as written", () => {
    const definition = { name: "inline", steps: [{ id: "a", sleep: { durationMs: 1 } }] };
    const run = parent(shipping({ id: "ship-{{ input.order }}", definitionRef: undefined, definition }));
    expect(childStarts(run.childEffects)).toMatchObject([{ start: { id: "ship-7", definition } }]);
  });

  it("fails the step for good when the id cannot be rendered or is no valid id", () => {
    const missing = parent(shipping({ id: "ship-{{ input.nope }}" }));
    expect(missing.step("ship")).toMatchObject({ status: "failed", error: { retryable: false } });
    expect(missing.step("ship").error?.message).toContain("input.nope");
    const tooLong = new Run(plan([shipping()]), { id: "p".repeat(124), input: { order: 7 } });
    expect(tooLong.step("ship").error?.message).toContain("workflow.id");
    expect(tooLong.childEffects).toEqual([]);
  });

  it("knows its depth: a child at depth 8 starts no grandchild, and its step fails with a clear error", () => {
    const deep = new Run(plan([shipping()]), { id: "c8", input: { order: 7 }, parent: { id: "c7", stepId: "ship", attempt: 1, depth: 8 } });
    expect(deep.step("ship")).toMatchObject({ status: "failed", error: { message: "child workflows nest at most 8 deep (this one would be at depth 9)", retryable: false } });
    expect(deep.childEffects).toEqual([]);
    const allowed = new Run(plan([shipping()]), { id: "c7", input: { order: 7 }, parent: { id: "c6", stepId: "ship", attempt: 1, depth: 7 } });
    expect(childStarts(allowed.childEffects)).toMatchObject([{ depth: 8 }]);
  });

  it("says in the diagnosis that the step waits for its child, which is an outside party and no liveness problem", () => {
    const run = parent();
    const diagnosis = diagnose(run.state, { alarmAt: null, recentDecisions: [] });
    expect(diagnosis.blockedOn).toMatchObject([{ stepId: "ship", reason: "waiting_for_child" }]);
    expect(diagnosis.problems).toEqual([]);
    expect(toWorkflowView(run.state).steps[0]).toMatchObject({ kind: "workflow", child: { id: "p:ship", status: "starting" } });
  });
});

describe("the child's start and end, applied once", () => {
  it("records the start once; a start delivered again changes nothing", () => {
    const run = parent();
    const first = run.send(started("p:ship"));
    expect(first.reply).toEqual({ ok: true, applied: true });
    expect(describeHistory(first.history)).toEqual(["child_workflow_started ship#1"]);
    expect(run.step("ship")).toMatchObject({ status: "waiting", child: { id: "p:ship", status: "running" } });
    const again = run.send(started("p:ship", "ship", false));
    expect(again).toMatchObject({ changed: false, reply: { ok: true, applied: false }, history: [] });
  });

  it("completes the step with the child's output; the next step starts; a second notice is ignored", () => {
    const run = parent();
    run.send(started("p:ship"));
    const end = run.send(ended("p:ship", "completed", { output: { tracking: "trk_9" } }));
    expect(describeHistory(end.history)).toEqual(["child_workflow_ended ship#1", "step_succeeded ship#1", "step_scheduled after#1"]);
    expect(run.step("ship")).toMatchObject({ status: "succeeded", output: { tracking: "trk_9" }, child: { id: "p:ship", status: "completed" } });
    const duplicate = run.send(ended("p:ship", "completed", { output: { tracking: "trk_9" } }));
    expect(duplicate).toMatchObject({ changed: false, reply: { applied: false }, history: [] });
  });

  it("takes the end notice before the start was recorded (the parent crashed in between), and the late record changes nothing", () => {
    const run = parent();
    expect(run.send(ended("p:ship", "completed")).reply).toEqual({ ok: true, applied: true });
    expect(run.step("ship").status).toBe("succeeded");
    expect(run.send(started("p:ship", "ship", false))).toMatchObject({ changed: false, reply: { applied: false } });
  });

  it.each(["failed", "compensated", "cancelled", "terminated"] as const)("fails the step for good when the child ended %s", (status) => {
    const run = parent(shipping(), { onFailure: "fail" });
    run.send(started("p:ship"));
    run.send(ended("p:ship", status));
    expect(run.step("ship")).toMatchObject({ status: "failed", error: { retryable: false } });
    expect(run.step("ship").error?.message).toBe(`child workflow "p:ship" ended ${status}: step "label" failed: HTTP 422`);
    expect(run.state.status).toBe("failed");
    expect(run.state.error?.message).toContain(`child workflow "p:ship" ended ${status}`);
  });

  it("fails the step for good when the start path refused the child", () => {
    const run = parent(shipping(), { onFailure: "fail" });
    const refused = run.send({ type: "ChildWorkflowRefused", stepId: "ship", childId: "p:ship", error: { message: 'No definition "shipping"' } });
    expect(refused.reply).toEqual({ ok: true, applied: true });
    expect(run.step("ship")).toMatchObject({ status: "failed", error: { message: 'No definition "shipping"', retryable: false } });
  });
});

describe("a step whose retry says so", () => {
  const retrying = () => parent(shipping({}, { retry: { maxAttempts: 2, initialIntervalMs: 100, jitter: 0 } }));

  it("starts a fresh child <id>:<attempt> after its backoff, and ignores the first child's late notice", () => {
    const run = retrying();
    run.send(started("p:ship"));
    const failedOnce = run.send(ended("p:ship", "failed"));
    expect(describeHistory(failedOnce.history)).toEqual(["child_workflow_ended ship#1", "step_failed ship#1", "step_retry_scheduled ship#1"]);
    expect(run.step("ship")).toMatchObject({ status: "retrying", nextRetryAt: T0 + 100 });
    run.wait(100).send(deadlinesReached());
    expect(run.step("ship")).toMatchObject({ status: "waiting", attempt: 2, child: { id: "p:ship:2", status: "starting" } });
    expect(childStarts(run.childEffects).map((effect) => effect.start.id)).toEqual(["p:ship", "p:ship:2"]);
    expect(run.send(ended("p:ship", "completed"))).toMatchObject({ changed: false, reply: { applied: false } });
    run.send(ended("p:ship:2", "completed", { attempt: 2, output: { tracking: "trk_2" } }));
    expect(run.step("ship")).toMatchObject({ status: "succeeded", output: { tracking: "trk_2" } });
  });

  it("fails for good once its attempts are used", () => {
    const run = retrying();
    run.send(ended("p:ship", "failed"));
    run.wait(100).send(deadlinesReached());
    run.send(ended("p:ship:2", "failed", { attempt: 2 }));
    expect(run.step("ship")).toMatchObject({ status: "failed", error: { retryable: false } });
  });
});

describe("the parent's close reaches its open children", () => {
  const closing = [
    { name: "a cancel cancels the child (onParentClose: cancel, the default)", onParentClose: undefined, event: cancelRequested(), action: "cancel" },
    { name: "a cancel terminates it with onParentClose: terminate", onParentClose: "terminate", event: cancelRequested(), action: "terminate" },
    { name: "a cancel leaves it running with onParentClose: abandon", onParentClose: "abandon", event: cancelRequested(), action: "abandon" },
    { name: "a terminate terminates it (onParentClose: cancel)", onParentClose: "cancel", event: terminateRequested(), action: "terminate" },
    { name: "a terminate leaves it running with onParentClose: abandon", onParentClose: "abandon", event: terminateRequested(), action: "abandon" },
  ] as const;

  it.each(closing)("$name", ({ onParentClose, event, action }) => {
    const run = parent(shipping(onParentClose ? { onParentClose } : {}));
    run.send(started("p:ship"));
    const result = run.send(event);
    expect(run.step("ship").status).toBe("cancelled");
    expect(result.history).toContainEqual({ type: "child_workflow_closed", stepId: "ship", attempt: 1, data: { childId: "p:ship", action } });
    expect(closes(result.childEffects)).toEqual(action === "abandon" ? [] : [{ type: "CloseChildWorkflow", stepId: "ship", childId: "p:ship", action }]);
  });

  it("closes a child whose start is not recorded yet, and closes nothing once the child ended", () => {
    const run = parent();
    expect(closes(run.send(cancelRequested()).childEffects)).toHaveLength(1);
    const done = parent(shipping(), { onFailure: "fail" });
    done.send(ended("p:ship", "completed"));
    expect(closes(done.send(cancelRequested()).childEffects)).toEqual([]);
  });
});

describe("a child's end, as its commit tells the parent", () => {
  const child = () => new Run(plan([step("label")]), { id: "p:ship", parent: { id: "p", stepId: "ship", attempt: 1, depth: 1 } });

  it("carries its parent in its state and view", () => {
    expect(toWorkflowView(child().state)).toMatchObject({ parent: { id: "p", stepId: "ship" } });
    expect(toWorkflowView(child().state).parent).toEqual({ id: "p", stepId: "ship" });
  });

  it("notifies the parent once, in the commit that ended it, with its output", () => {
    const run = child();
    const before = run.state;
    const result = run.send({ type: "AttemptClaimed", stepId: "label", attempt: 1 });
    expect(commitPlan(before, result, run.now).effects.filter((effect) => effect.type === "NotifyParent")).toEqual([]);
    const end = run.send({ type: "AttemptSucceeded", stepId: "label", attempt: 1, output: { n: 1 } });
    const notices = commitPlan(result.state, end, run.now).effects.filter((effect) => effect.type === "NotifyParent");
    expect(notices).toEqual([
      { type: "NotifyParent", notice: { parentId: "p", stepId: "ship", attempt: 1, childId: "p:ship", status: "completed", output: { label: { n: 1 } } } },
    ]);
    expect(commitPlan(end.state, run.send(cancelRequested()), run.now).effects.filter((effect) => effect.type === "NotifyParent")).toEqual([]);
  });
});

describe("a child's end after its parent closed it", () => {
  it("says in the step's view how the child ended, and changes nothing else", () => {
    const run = parent();
    run.send(started("p:ship"));
    run.send(cancelRequested());
    expect(run.state.status).toBe("cancelled");
    const notice = run.send(ended("p:ship", "cancelled"));
    expect(notice.reply).toEqual({ ok: true, applied: true });
    expect(describeHistory(notice.history)).toEqual(["child_workflow_ended ship#1"]);
    expect(run.state.status).toBe("cancelled");
    expect(run.step("ship")).toMatchObject({ status: "cancelled", child: { id: "p:ship", status: "cancelled" } });
    expect(run.send(ended("p:ship", "cancelled")).reply).toEqual({ ok: true, applied: false });
  });
});
