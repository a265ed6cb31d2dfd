// The parent/child phase: the family's predictions (shapes, children, the remote's declines) and its four checks
// against the views, listings and histories they read.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { HistoryEvent, MapItemView, StepView, WorkflowView } from "../lib/api-shapes.ts";
import { childEventViolations, childListViolations, closedChildViolations, parentEndViolations, parentStepOf } from "../lib/checks/children.ts";
import type { Views } from "../lib/checks/children.ts";
import type { ParentRecord } from "../lib/children-driver.ts";
import { buildParentFamily, CHILDREN_PER_MAP, familyDecline, parentPlan, PARENT_SHAPES } from "../lib/children.ts";

const SEED = "1";
const family = buildParentFamily({ seed: SEED, count: 12, remoteUrl: "http://127.0.0.1:1" });
const output = { s1: { effectId: "eff_1", step: "s1" } };

function view(id: string, status: string, extra: Partial<WorkflowView> = {}, steps: StepView[] = []): WorkflowView {
  return { id, name: "chaos", status, steps, createdAt: 0, updatedAt: 0, ...extra };
}
const step = (id: string, status: string, extra: Partial<StepView> = {}): StepView => ({ id, status, attempt: 1, attempts: [], ...extra });
const views = (...list: WorkflowView[]): Views => new Map(list.map((v) => [v.id, v]));
const event = (type: string, data: Record<string, unknown>): HistoryEvent => ({ type, at: 0, data });
const record = (id: string, extra: Partial<ParentRecord> = {}): ParentRecord => ({ id, cancelAnswers: [], cancelSentAt: null, releaseAnswers: [], listed: null, items: null, itemsError: null, ...extra });
const row = (id: string) => ({ id, status: "completed" });

describe("the parent/child family", () => {
  it("deals its six shapes in turn, the cancelled ones left out of the progress threshold", () => {
    assert.deepEqual(family.plans.map((p) => p.shape), [...PARENT_SHAPES, ...PARENT_SHAPES]);
    assert.deepEqual(family.parents.filter((wf) => wf.closedByDesign).length, 6);
  });

  it("predicts one child per step attempt: `:2` after the retried shape's declined first child, `:<index>` per map item", () => {
    assert.deepEqual(parentPlan("p", "inline").children, ["p:ship"]);
    assert.deepEqual(parentPlan("p", "retried").children, ["p:ship", "p:ship:2"]);
    const map = parentPlan("p", "map");
    assert.equal(map.children.length, CHILDREN_PER_MAP);
    assert.equal(map.children[7], "p:kids:7");
    assert.equal(parentStepOf(map, "p:kids:7"), "kids#7");
    assert.equal(parentPlan("p", "abandon").onParentClose, "abandon");
  });

  it("cancels terminate's parent after the restart in the first round of shapes, cancel's and abandon's in the second", () => {
    const after = family.plans.filter((p) => p.cancelAfterRestart).map((p) => `${p.shape}@${family.plans.indexOf(p)}`);
    assert.deepEqual(after, ["terminate@3", "cancel@7", "abandon@11"]);
  });

  it("has the remote decline only the retried shape's first child's first step, and leaves other keys to the draw", () => {
    const retried = family.plans.find((p) => p.shape === "retried");
    const inline = family.plans.find((p) => p.shape === "inline");
    assert.ok(retried && inline);
    assert.equal(familyDecline(SEED, `${retried.id}:ship:s1`), true);
    assert.equal(familyDecline(SEED, `${retried.id}:ship:2:s1`), false);
    assert.equal(familyDecline(SEED, `${inline.id}:ship:s1`), false);
    assert.equal(familyDecline(SEED, "chaos-1-0001:s1"), null);
    assert.equal(family.children.find((c) => c.id === `${retried.id}:ship`)?.declinedStep, "s1");
  });
});

describe("the parent/child checks", () => {
  const inline = parentPlan("p", "inline");

  it("passes a completed parent whose step's output is its child's", () => {
    const parent = view("p", "completed", {}, [step("ship", "succeeded", { output, child: { id: "p:ship", status: "completed" } })]);
    assert.deepEqual(parentEndViolations(inline, views(parent, view("p:ship", "completed", { output })), undefined), []);
  });

  it("finds a step output that is not its child's, and a map item that is not its child's", () => {
    const parent = view("p", "completed", {}, [step("ship", "succeeded", { output: {}, child: { id: "p:ship", status: "completed" } })]);
    assert.equal(parentEndViolations(inline, views(parent, view("p:ship", "completed", { output })), undefined)[0]?.kind, "step output ≠ its child's output");
    const map = parentPlan("m", "map");
    const items: MapItemView[] = map.children.map((_, index) => ({ index, status: "succeeded", attempt: 1, output: index === 3 ? {} : output }));
    const children = map.children.map((id) => view(id, "completed", { output }));
    const found = parentEndViolations(map, views(view("m", "completed"), ...children), record("m", { items }));
    assert.deepEqual(found.map((v) => v.index), [3]);
  });

  it("lists a second child for a step attempt as not predicted, and a child whose parent does not point back", () => {
    const back = view("p:ship", "completed", { parent: { id: "p", stepId: "ship" } });
    assert.deepEqual(childListViolations(inline, [row("p:ship")], views(view("p", "completed"), back)), []);
    const extra = childListViolations(inline, [row("p:ship"), row("p:ship:2")], views(view("p", "completed"), back));
    assert.deepEqual(extra.map((v) => v.kind), ["child not predicted (a second child for a step attempt?)"]);
    const astray = childListViolations(inline, [row("p:ship")], views(view("p", "completed"), view("p:ship", "completed", { parent: { id: "q", stepId: "ship" } })));
    assert.equal(astray[0]?.kind, "child's parent does not point back");
  });

  it("misses a predicted child only when its parent ended as predicted", () => {
    const retried = parentPlan("r", "retried");
    const back = view("r:ship", "compensated", { parent: { id: "r", stepId: "ship" } });
    assert.equal(childListViolations(retried, [row("r:ship")], views(view("r", "completed"), back))[0]?.kind, "predicted child not listed");
    assert.deepEqual(childListViolations(retried, [row("r:ship")], views(view("r", "failed"), back)), []);
  });

  it("wants a cancelled parent's child closed as onParentClose says, and an abandoned one left to end on its own", () => {
    const closed = [event("child_workflow_closed", { childId: "c:ship", action: "terminate" })];
    const terminate = { ...parentPlan("c", "terminate") };
    const sent = record("c", { cancelSentAt: 1 });
    assert.deepEqual(closedChildViolations(terminate, views(view("c:ship", "terminated")), closed, sent), []);
    assert.equal(closedChildViolations(terminate, views(view("c:ship", "cancelled")), closed, sent).length, 1);
    assert.equal(closedChildViolations(terminate, views(view("c:ship", "terminated")), [], sent)[0]?.kind, "child's close not recorded once as onParentClose says");
    const abandon = parentPlan("c", "abandon");
    const abandoned = [event("child_workflow_closed", { childId: "c:ship", action: "abandon" })];
    assert.deepEqual(closedChildViolations(abandon, views(view("c:ship", "running")), abandoned, sent), []);
    assert.deepEqual(closedChildViolations(abandon, views(view("c:ship", "completed")), abandoned, sent), []);
  });

  it("finds a child's end applied twice, and a completed parent with a child's end never applied", () => {
    const ended = event("child_workflow_ended", { childId: "p:ship", status: "completed" });
    const both = views(view("p", "completed"), view("p:ship", "completed"));
    assert.deepEqual(childEventViolations(inline, both, [ended]), []);
    assert.equal(childEventViolations(inline, both, [ended, ended])[0]?.kind, "child's end applied twice");
    assert.equal(childEventViolations(inline, both, [])[0]?.kind, "child's end never applied");
    assert.deepEqual(childEventViolations(parentPlan("p", "cancel"), views(view("p", "cancelled"), view("p:ship", "cancelled")), []), []);
  });
});
