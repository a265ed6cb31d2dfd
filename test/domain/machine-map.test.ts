import { describe, expect, it } from "vitest";
import { MAX_MAP_ITEMS } from "../../src/domain/language/steps";
import { toWorkflowView } from "../../src/domain/machine/view";
import { diagnose } from "../../src/domain/machine/diagnosis";
import { nextDeadlineAt, type WorkflowEvent } from "../../src/domain/machine";
import {
  cancelRequested,
  claimed,
  describeHistory,
  expectTransition,
  failedPermanently,
  httpAction,
  mapStep,
  pauseRequested,
  plan,
  redriveRequested,
  resumeRequested,
  Run,
  step,
  succeeded,
  terminateRequested,
  undoable,
  type TransitionCase,
} from "./builders";

const five = [10, 11, 12, 13, 14];
const inFlight = (run: Run) => run.state.steps.filter((s) => s.id.includes("#")).map((s) => s.id);
const counts = (run: Run) => toWorkflowView(run.state).steps.find((s) => s.id === "m")?.items;

/** Reports success for each item id in order, claiming it first, with output `{ n: index }`. */
function finish(run: Run, ...ids: string[]): Run {
  for (const id of ids) {
    const attempt = run.step(id).attempt;
    run.send(claimed(id, attempt));
    run.send(succeeded(id, attempt, { n: Number(id.split("#")[1]) }));
  }
  return run;
}

describe("a map starts its items up to maxConcurrency", () => {
  const cases: TransitionCase[] = [
    {
      name: "the first two of five items, as steps of their own",
      plan: plan([step("a"), mapStep("m", "{{ input.list }}", { maxConcurrency: 2 })]),
      input: { list: five },
      given: [claimed("a")],
      when: succeeded("a", 1),
      then: {
        status: "running",
        steps: { a: "succeeded", m: "running", "m#0": "scheduled", "m#1": "scheduled" },
        history: ["step_succeeded a#1", "map_started m", "step_scheduled m#0#1", "step_scheduled m#1#1"],
        effects: ["enqueue m#0#1 action", "enqueue m#1#1 action"],
        check: (result) => {
          expect(result.pendingItems).toEqual([{ stepId: "m", total: 5 }]);
          expect(result.history[1]?.data).toEqual({ total: 5, maxConcurrency: 2 });
        },
      },
    },
    {
      name: "an empty array succeeds at once with []",
      plan: plan([step("a"), mapStep("m", [])]),
      given: [claimed("a")],
      when: succeeded("a", 1),
      then: { status: "completed", steps: { m: "succeeded" }, history: ["step_succeeded a#1", "map_started m", "step_succeeded m", "workflow_completed"], effects: [], check: (result) => expect(result.state.output?.m).toEqual([]) },
    },
    {
      name: "items that are not an array fail the step for good",
      plan: plan([step("a"), mapStep("m", "{{ steps.a.output }}")], { onFailure: "fail" }),
      given: [claimed("a")],
      when: succeeded("a", 1, { not: "a list" }),
      then: {
        status: "failed",
        steps: { m: "failed" },
        history: ["step_succeeded a#1", "step_failed m", "workflow_failed"],
        effects: [],
        check: (result) => expect(result.state.steps[1]?.error?.message).toBe("map.items must be an array (got object)"),
      },
    },
    {
      name: `more than ${MAX_MAP_ITEMS} items is a clear error when they are known`,
      plan: plan([step("a"), mapStep("m", "{{ steps.a.output }}")], { onFailure: "fail" }),
      given: [claimed("a")],
      when: succeeded("a", 1, Array.from({ length: MAX_MAP_ITEMS + 1 }, (_, i) => i)),
      then: { status: "failed", steps: { m: "failed" }, history: ["step_succeeded a#1", "step_failed m", "workflow_failed"], effects: [], check: (result) => expect(result.state.steps[1]?.error?.message).toContain("at most 10000") },
    },
  ];
  it.each(cases)("$name", (row) => expectTransition(row));
});

describe("a map's items run as steps, in a window", () => {
  it("an item that ends gives way to the next; the output is in item order whatever the order of ends", () => {
    const run = new Run(plan([mapStep("m", five, { maxConcurrency: 2 }), step("after", { action: httpAction("after", { body: "{{ steps.m.output }}" }) })]));
    finish(run, "m#1");
    expect(inFlight(run)).toEqual(["m#0", "m#2"]);
    expect(counts(run)).toEqual({ total: 5, pending: 2, running: 2, succeeded: 1, failed: 0, skipped: 0 });
    finish(run, "m#2", "m#0", "m#4", "m#3");
    expect(run.step("m").status).toBe("succeeded");
    expect(run.step("m").output).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    expect(inFlight(run)).toEqual([]);
    expect(run.step("after").status).toBe("scheduled");
    expect(run.state.completionOrder).toEqual(["m"]);
  });

  it("renders item and index into the item's action, under the key <workflowId>:<stepId>:<index>", () => {
    const items = [{ url: "https://img.example/a.png" }, { url: "https://img.example/b.png" }];
    const body = { src: "{{ item.url }}", n: "{{ index }}", label: "image {{ index }}" };
    const run = new Run(plan([mapStep("m", items, { step: { action: httpAction("thumb", { method: "POST", body }) } })]), { id: "wf-map" });
    const claim = run.send(claimed("m#1"));
    expect(claim.reply).toMatchObject({ ok: true, task: { idempotencyKey: "wf-map:m:1", action: { body: { src: "https://img.example/b.png", n: 1, label: "image 1" } } } });
  });

  it("each item has its own attempts and retry budget", () => {
    const run = new Run(plan([mapStep("m", [1, 2], { maxConcurrency: 2 })]));
    run.send(claimed("m#0"));
    run.send({ type: "AttemptFailed", stepId: "m#0", attempt: 1, error: { message: "HTTP 503", retryable: true } });
    expect(run.step("m#0")).toMatchObject({ status: "retrying", budgetUsed: 1 });
    expect(run.step("m#1")).toMatchObject({ status: "scheduled", budgetUsed: 1 });
  });

  it("a report from an item that has ended is gone, not unknown", () => {
    const run = finish(new Run(plan([mapStep("m", [1, 2], { maxConcurrency: 1 })])), "m#0");
    expect(run.send(succeeded("m#0", 1)).reply).toMatchObject({ ok: false, code: "gone" });
  });
});

describe("a map's tolerance", () => {
  it("tolerates toleratedFailures items failing for good, then fails and fences the rest", () => {
    const run = new Run(plan([mapStep("m", five, { maxConcurrency: 3, toleratedFailures: 1 })], { onFailure: "fail" }));
    run.send(failedPermanently("m#0"));
    expect(run.step("m").status).toBe("running");
    expect(inFlight(run)).toEqual(["m#1", "m#2", "m#3"]);
    run.send(claimed("m#1"));
    const second = run.send(failedPermanently("m#2"));
    expect(run.state.status).toBe("failed");
    expect(run.step("m").error?.message).toBe("2 of 5 items failed for good; item 2: HTTP 422");
    expect(inFlight(run)).toEqual([]);
    expect(describeHistory(second.history)).toEqual(["step_failed m#2#1", "step_failed m", "workflow_failed"]);
    expect(run.rows.get("m", 1)).toMatchObject({ status: "cancelled", mayHaveEffect: true });
    expect(run.rows.get("m", 3)).toMatchObject({ status: "cancelled" });
    expect(run.rows.get("m", 3)?.mayHaveEffect).toBeUndefined();
    expect(run.send(succeeded("m#1", 1)).reply).toMatchObject({ ok: false, code: "gone" });
  });

  it("toleratedFailurePercent counts against the number of items", () => {
    const run = new Run(plan([mapStep("m", five, { maxConcurrency: 5, toleratedFailurePercent: 20 })], { onFailure: "fail" }));
    run.send(failedPermanently("m#4"));
    finish(run, "m#0", "m#1", "m#2", "m#3");
    expect(run.step("m").status).toBe("succeeded");
    expect(run.step("m").output).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }, null]);
    expect(counts(run)).toMatchObject({ succeeded: 4, failed: 1, pending: 0, running: 0 });
  });
});

describe("undoing a map", () => {
  const undoableMap = (extra: object = {}) =>
    plan([mapStep("m", [0, 1, 2], { maxConcurrency: 3, step: { action: httpAction("m"), compensate: httpAction("m/undo", { body: "{{ steps.m.output }}" }) }, ...extra }), undoable("last")]);

  it("compensation undoes the succeeded items newest first, one at a time", () => {
    const run = finish(new Run(undoableMap()), "m#2", "m#0", "m#1");
    run.send(claimed("last"));
    run.send(failedPermanently("last"));
    expect(run.state.status).toBe("compensating");
    const undone: string[] = [];
    for (const _ of [0, 1, 2]) {
      const item = inFlight(run)[0]!;
      undone.push(item);
      const attempt = run.step(item).attempt;
      const claim = run.send(claimed(item, attempt));
      expect(claim.reply).toMatchObject({ task: { kind: "compensation", idempotencyKey: `${run.state.id}:m:${item.split("#")[1]}:compensate`, action: { body: { n: Number(item.split("#")[1]) } } } });
      run.send(succeeded(item, attempt));
    }
    expect(undone).toEqual(["m#1", "m#0", "m#2"]);
    expect(run.state.status).toBe("compensated");
    expect(run.step("m").status).toBe("compensated");
    expect(run.rows.get("m", 0)?.status).toBe("compensated");
  });

  it("a cancel fences the items in flight and undoes those that succeeded or had started", () => {
    const run = finish(new Run(undoableMap({ maxConcurrency: 2 })), "m#0");
    run.send(claimed("m#1"));
    run.send(cancelRequested());
    expect(run.step("m").status).toBe("compensating");
    expect(inFlight(run)).toEqual(["m#1"]);
    const item = run.step("m#1");
    expect(item.attempts.at(-1)?.kind).toBe("compensation");
    run.send(claimed("m#1", item.attempt));
    run.send(succeeded("m#1", item.attempt));
    expect(inFlight(run)).toEqual(["m#0"]);
  });
});

describe("a map and the operator", () => {
  it("a paused workflow starts no item; resume fills the window again", () => {
    const run = new Run(plan([mapStep("m", five, { maxConcurrency: 2 })]));
    run.send(pauseRequested());
    finish(run, "m#0");
    expect(inFlight(run)).toEqual(["m#1"]);
    run.send(resumeRequested());
    expect(inFlight(run)).toEqual(["m#1", "m#2"]);
  });

  it("a redrive runs again only the items that did not succeed, attempt numbers running on", () => {
    const run = new Run(plan([mapStep("m", five, { maxConcurrency: 5, toleratedFailures: 1 })], { onFailure: "fail" }));
    finish(run, "m#0", "m#2");
    run.send(failedPermanently("m#1"));
    run.send(failedPermanently("m#3"));
    expect(run.state.status).toBe("failed");
    const redriven = run.send(redriveRequested());
    expect(redriven.reply).toEqual({ ok: true });
    expect(inFlight(run)).toEqual(["m#1", "m#3", "m#4"]);
    expect(run.step("m#1").attempt).toBe(2);
    expect(counts(run)).toMatchObject({ total: 5, succeeded: 2, running: 3, pending: 0 });
    finish(run, "m#4", "m#3", "m#1");
    expect(run.state.status).toBe("completed");
    expect(run.step("m").output).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
  });
});

describe("a redrive from a map", () => {
  it("runs all its items again under a new key round, attempt numbers running on", () => {
    const run = finish(new Run(plan([mapStep("m", [0, 1], { maxConcurrency: 2 }), step("last")], { onFailure: "fail" })), "m#0", "m#1");
    run.send(claimed("last"));
    run.send(failedPermanently("last"));
    expect(run.state.status).toBe("failed");
    run.send(redriveRequested("m"));
    expect(inFlight(run)).toEqual(["m#0", "m#1"]);
    expect(run.step("m#0").attempt).toBe(2);
    expect(run.rows.get("m", 1)).toMatchObject({ status: "running", attempt: 1 });
    const claim = run.send(claimed("m#0", 2));
    expect(claim.reply).toMatchObject({ task: { idempotencyKey: `${run.state.id}:m:0:redrive-1` } });
  });
});

describe("a map as the supervisor sees it", () => {
  it("keeps only the items in flight in the state, however many items there are", () => {
    const run = new Run(plan([mapStep("m", "{{ input.list }}", { maxConcurrency: 3 })]), { input: { list: Array.from({ length: 200 }, (_, i) => i) } });
    let most = 0;
    while (run.state.status === "running") {
      finish(run, inFlight(run)[0]!);
      most = Math.max(most, run.state.steps.length);
    }
    expect(run.state.status).toBe("completed");
    expect(most).toBeLessThanOrEqual(1 + 3);
    expect((run.step("m").output as unknown[]).length).toBe(200);
  });

  it("names a running map and each item in flight in the diagnosis, and finds nothing wrong", () => {
    const run = finish(new Run(plan([mapStep("m", five, { maxConcurrency: 2 })])), "m#0");
    const diagnosis = diagnose(run.state, { alarmAt: nextDeadlineAt(run.state) ?? null, recentDecisions: [] });
    expect(diagnosis.problems).toEqual([]);
    expect(diagnosis.blockedOn.map((entry) => entry.stepId)).toEqual(["m", "m#1", "m#2"]);
    expect(diagnosis.blockedOn[0]?.detail).toBe("a map: 2 of 5 items in flight, 1 succeeded, 0 failed");
  });

  it("a terminate stops the items in flight and undoes nothing", () => {
    const run = new Run(plan([mapStep("m", five, { maxConcurrency: 2, step: { action: httpAction("m"), compensate: httpAction("m/undo") } })]));
    run.send(claimed("m#0"));
    run.send(terminateRequested());
    expect(run.state.status).toBe("terminated");
    expect(inFlight(run)).toEqual([]);
    expect(run.step("m").status).toBe("cancelled");
    expect(run.rows.get("m", 0)).toMatchObject({ status: "cancelled", mayHaveEffect: true });
  });
});

describe("a map whose item is a child workflow", () => {
  const childMap = () =>
    new Run(plan([mapStep("m", [{ order: 1 }, { order: 2 }, { order: 3 }], { maxConcurrency: 2, step: { workflow: { definitionRef: { name: "shipping" }, input: { order: "{{ item.order }}" } } } })]), { id: "p" });
  const childEnded = (stepId: string, childId: string, output: unknown): WorkflowEvent => ({ type: "ChildWorkflowEnded", parentId: "p", stepId, attempt: 1, childId, status: "completed", output });

  it("starts one child per item, <parentId>:<stepId>:<index>, and takes each child's output as its item's", () => {
    const run = childMap();
    const starts = run.childEffects.filter((effect) => effect.type === "StartChildWorkflow");
    expect(starts.map((effect) => effect.type === "StartChildWorkflow" && [effect.stepId, effect.start.id, effect.start.input])).toEqual([
      ["m#0", "p:m:0", { order: 1 }],
      ["m#1", "p:m:1", { order: 2 }],
    ]);
    run.send(childEnded("m#1", "p:m:1", { shipped: 2 }));
    expect(run.send(childEnded("m#1", "p:m:1", { shipped: 2 })).reply).toEqual({ ok: true, applied: false });
    run.send(childEnded("m#0", "p:m:0", { shipped: 1 }));
    run.send(childEnded("m#2", "p:m:2", { shipped: 3 }));
    expect(run.state.status).toBe("completed");
    expect(run.step("m").output).toEqual([{ shipped: 1 }, { shipped: 2 }, { shipped: 3 }]);
  });

  it("a cancel of the parent closes the children of the items in flight", () => {
    const run = childMap();
    const cancel = run.send(cancelRequested());
    expect(cancel.childEffects.filter((effect) => effect.type === "CloseChildWorkflow").map((effect) => effect.type === "CloseChildWorkflow" && [effect.stepId, effect.childId, effect.action])).toEqual([
      ["m#0", "p:m:0", "cancel"],
      ["m#1", "p:m:1", "cancel"],
    ]);
  });
});
