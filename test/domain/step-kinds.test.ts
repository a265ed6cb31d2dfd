// The step kinds' registry, one row per kind: what a definition step of the kind plans to, how it starts, the
// deadline of its timer and what happens when that falls due; and that plans and step rows stored before the
// plan and the state had `kind` still load, with the kind they had.
import { describe, expect, it } from "vitest";
import { nextDeadline } from "../../src/domain/machine/deadlines";
import { StepPlanSchema } from "../../src/domain/language/plan";
import type { StepInput } from "../../src/domain/language/schemas";
import { StoredStepSchema, StepStateSchema, withStepKinds } from "../../src/domain/machine/state";
import { STEP_KINDS, STEP_KIND_NAMES, type StepKindName } from "../../src/domain/language/steps";
import { toWorkflowView } from "../../src/domain/machine/view";
import { deadlinesReached, describeEffects, describeHistory, httpAction, plan, Run, T0 } from "./builders";

interface KindCase {
  /** The step as a definition has it; its id is `s`. */
  step: StepInput;
  /** Its plan, past what every step's plan has. */
  planned: Record<string, unknown>;
  /** What starting it does: its status, history and effects. */
  started: { status: string; history: string[]; effects: string[] };
  /** Its timer's deadline once started, if its kind has one, and the step's status once the timer fell due. */
  timer?: { reason: string; at: number; dueStatus: string; view: Record<string, unknown> };
}

const CASES: { [K in StepKindName]: KindCase } = {
  action: {
    step: { id: "s", action: httpAction("s"), verify: httpAction("s/check") },
    planned: { kind: "action", action: httpAction("s"), verify: httpAction("s/check") },
    started: { status: "scheduled", history: ["workflow_started", "step_scheduled s#1"], effects: ["enqueue s#1 action"] },
  },
  sleep: {
    step: { id: "s", sleep: { durationMs: 1_000 } },
    planned: { kind: "sleep", sleep: { durationMs: 1_000 } },
    started: { status: "sleeping", history: ["workflow_started", "step_sleeping s"], effects: [] },
    timer: { reason: "sleep", at: T0 + 1_000, dueStatus: "succeeded", view: { sleepingUntil: T0 + 1_000 } },
  },
  waitForEvent: {
    step: { id: "s", waitForEvent: { event: "approved", timeoutMs: 2_000, onTimeout: "skip" } },
    planned: { kind: "waitForEvent", waitForEvent: { event: "approved", timeoutMs: 2_000, onTimeout: "skip" } },
    started: { status: "waiting", history: ["workflow_started", "step_waiting_for_event s"], effects: [] },
    timer: { reason: "wait_timeout", at: T0 + 2_000, dueStatus: "skipped", view: { waitingFor: { event: "approved", timeoutAt: T0 + 2_000 } } },
  },
  map: {
    step: { id: "s", map: { items: [1, 2], maxConcurrency: 1, step: { action: httpAction("s") } } },
    planned: { kind: "map", map: { items: [1, 2], maxConcurrency: 1 } },
    started: { status: "running", history: ["workflow_started", "map_started s", "step_scheduled s#0#1"], effects: ["enqueue s#0#1 action"] },
  },
  workflow: {
    step: { id: "s", workflow: { definitionRef: { name: "shipping" } } },
    planned: { kind: "workflow", workflow: { definitionRef: { name: "shipping" } } },
    // The child's start is an effect of its own kind (children.ts), not an attempt for the queue.
    started: { status: "waiting", history: ["workflow_started", "step_waiting_for_child s#1"], effects: [] },
  },
};

describe.each(STEP_KIND_NAMES.map((kind) => [kind, CASES[kind]] as const))("the %s step kind", (kind, row) => {
  it("plans its own fields under its kind", () => {
    expect(plan([row.step]).steps[0]).toMatchObject({ id: "s", dependsOn: [], ...row.planned });
  });

  it("starts as its kind, and its state carries the kind", () => {
    const run = new Run(plan([row.step]));
    expect(run.step("s")).toMatchObject({ kind, status: row.started.status });
    expect(describeHistory(run.log)).toEqual(row.started.history);
    expect(describeEffects(run.effects)).toEqual(row.started.effects);
  });

  it(row.timer ? "arms its timer, which the supervisor hands back to it when due" : "arms no timer of its own", () => {
    const run = new Run(plan([row.step]));
    expect(Boolean(STEP_KINDS[kind].timer)).toBe(row.timer !== undefined);
    if (!row.timer) {
      expect(run.step("s").timerAt).toBeUndefined();
      return;
    }
    expect(nextDeadline(run.state)).toEqual({ at: row.timer.at, reason: row.timer.reason, stepId: "s" });
    expect(toWorkflowView(run.state).steps[0]).toMatchObject({ kind, ...row.timer.view });
    run.wait(row.timer.at - T0).send(deadlinesReached());
    expect(run.step("s").status).toBe(row.timer.dueStatus);
  });
});

describe("rows stored before the plan and the state had a kind", () => {
  const common = { dependsOn: [], retry: plan([CASES.action.step]).steps[0]!.retry, timeouts: plan([CASES.action.step]).steps[0]!.timeouts };

  it.each(STEP_KIND_NAMES.map((kind) => [kind, CASES[kind]] as const))("reads a %s step's plan by the one kind field it has", (kind, row) => {
    const { kind: _kind, ...stored } = row.planned;
    expect(StepPlanSchema.parse({ id: "s", ...common, ...stored })).toMatchObject({ kind, ...row.planned });
  });

  it("gives a step row without a kind its plan's, and keeps the kind a row has", () => {
    const workflowPlan = plan([CASES.action.step, { ...CASES.sleep.step, id: "nap" }]);
    const rows = [
      { id: "s", status: "pending", attempt: 0, budgetUsed: 0, attempts: [] },
      { id: "nap", kind: "sleep", status: "pending", attempt: 0, budgetUsed: 0, attempts: [] },
    ].map((row) => StoredStepSchema.parse(row));
    const steps = withStepKinds(workflowPlan, rows);
    expect(steps.map((step) => step.kind)).toEqual(["action", "sleep"]);
    expect(StepStateSchema.parse(steps[1])).toEqual(steps[1]);
    expect(withStepKinds(plan([{ ...CASES.sleep.step, id: "s" }]), [rows[0]!])[0]?.kind).toBe("sleep");
  });
});
