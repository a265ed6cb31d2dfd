import { describe, expect, it } from "vitest";
import {
  claimed,
  describeHistory,
  eventReceived,
  expectTransition,
  failedPermanently,
  plan,
  Run,
  sleepStep,
  step,
  stepOf,
  succeeded,
  undoable,
  waitStep,
  type TransitionCase,
} from "./builders";

/** `ship` runs only when `check` approved; `notify` comes after `ship` either way. */
const gated = plan([step("check"), step("ship", { when: "{{ steps.check.output.approved }}" }), step("notify")]);

describe("a step's when, evaluated once the step is ready", () => {
  const skips = (output: unknown): TransitionCase => ({
    name: `skips the step when check's output is ${JSON.stringify(output)}`,
    plan: gated,
    given: [claimed("check")],
    when: succeeded("check", 1, output),
    then: {
      status: "running",
      steps: { check: "succeeded", ship: "skipped", notify: "scheduled" },
      history: ["step_succeeded check#1", "step_skipped ship", "step_scheduled notify#1"],
      effects: ["enqueue notify#1 action"],
      check: (result) => {
        const ship = stepOf(result.state, "ship");
        expect(ship).toMatchObject({ output: null, attempt: 0, attempts: [] });
        expect(result.history[1]?.data).toEqual({ reason: "when" });
        expect(result.state.completionOrder).toEqual(["check"]);
      },
    },
  });
  const runs = (output: unknown): TransitionCase => ({
    name: `runs the step when check's output is ${JSON.stringify(output)}`,
    plan: gated,
    given: [claimed("check")],
    when: succeeded("check", 1, output),
    then: {
      status: "running",
      steps: { check: "succeeded", ship: "scheduled", notify: "pending" },
      history: ["step_succeeded check#1", "step_scheduled ship#1"],
      effects: ["enqueue ship#1 action"],
    },
  });

  const rows: TransitionCase[] = [
    skips({ approved: false }),
    skips({ approved: null }),
    skips({ approved: 0 }),
    skips({ approved: "" }),
    // A missing path is falsy, not an error: `check` said nothing about approval.
    skips({}),
    // ... and so is a path through null.
    skips(null),
    skips("approved"),
    runs({ approved: true }),
    runs({ approved: 1 }),
    runs({ approved: "yes" }),
    // Only the five falsy values skip: the text "false", an empty object or list are values like any other.
    runs({ approved: "false" }),
    runs({ approved: {} }),
    runs({ approved: [] }),
  ];

  it.each(rows)("$name", (row) => expectTransition(row));

  it("reads the workflow input, so a first step may be skipped as the workflow starts", () => {
    const run = new Run(plan([step("express", { when: "{{ input.express }}" }), step("standard", { dependsOn: [] })]), { input: { express: false } });
    expect(describeHistory(run.log)).toEqual(["workflow_started", "step_skipped express", "step_scheduled standard#1"]);
  });

  it("skips a whole chain when each link reads the output of the one before", () => {
    const chain = plan([step("a"), step("b", { when: "{{ steps.a.output.go }}" }), step("c", { when: "{{ steps.b.output }}" }), step("d")]);
    const run = new Run(chain).play([claimed("a")]);
    const result = run.send(succeeded("a", 1, { go: false }));
    expect(describeHistory(result.history)).toEqual(["step_succeeded a#1", "step_skipped b", "step_skipped c", "step_scheduled d#1"]);
  });

  it("completes a workflow whose last step is skipped, with output null for it", () => {
    const run = new Run(plan([step("a"), step("b", { when: "{{ steps.a.output.more }}" })])).play([claimed("a")]);
    const result = run.send(succeeded("a", 1, { more: 0 }));
    expect(describeHistory(result.history)).toEqual(["step_succeeded a#1", "step_skipped b", "workflow_completed"]);
    expect(run.state.output).toEqual({ a: { more: 0 }, b: null });
  });

  it("applies to a sleep step: a falsy when skips it without sleeping", () => {
    const run = new Run(plan([sleepStep("cooldown", { durationMs: 60_000 }, { when: "{{ input.cool }}" }), step("b")]), { input: { cool: null } });
    expect(describeHistory(run.log)).toEqual(["workflow_started", "step_skipped cooldown", "step_scheduled b#1"]);
    expect(run.step("cooldown").timerAt).toBeUndefined();
  });

  it("applies to a wait step: a falsy when skips it and leaves its event in the inbox for a later wait", () => {
    const waits = plan([
      step("a"),
      waitStep("approval", { event: "approved", timeoutMs: 1_000 }, { when: "{{ steps.a.output.needsApproval }}" }),
      waitStep("audit", { event: "approved", timeoutMs: 1_000 }),
    ]);
    const run = new Run(waits).play([eventReceived("approved", { payload: "ok" }), claimed("a")]);
    const result = run.send(succeeded("a", 1, { needsApproval: false }));
    expect(describeHistory(result.history)).toEqual([
      "step_succeeded a#1",
      "step_skipped approval",
      "step_waiting_for_event audit",
      "event_consumed audit",
      "step_succeeded audit",
      "workflow_completed",
    ]);
    expect(run.step("audit").output).toBe("ok");
  });
});

describe("compensation and skipped steps", () => {
  /** `b` is skipped by its when; `c` then fails for good. */
  const withSkipped = plan([undoable("a"), undoable("b", { when: "{{ steps.a.output.go }}" }), step("c")]);

  const rows: TransitionCase[] = [
    {
      name: "does not compensate a step its when skipped: it never ran",
      plan: withSkipped,
      given: [claimed("a"), succeeded("a", 1, { go: false }), claimed("c")],
      when: failedPermanently("c"),
      then: {
        status: "compensating",
        steps: { a: "compensating", b: "skipped", c: "failed" },
        history: ["step_failed c#1", "compensation_started", "step_scheduled a#2"],
        effects: ["enqueue a#2 compensation"],
        check: (result) => expect(result.state.compensation?.queue).toEqual(["a"]),
      },
    },
    {
      name: "ends compensated with the skipped step still skipped",
      plan: withSkipped,
      given: [claimed("a"), succeeded("a", 1, { go: false }), claimed("c"), failedPermanently("c"), claimed("a", 2)],
      when: succeeded("a", 2),
      then: {
        status: "compensated",
        steps: { a: "compensated", b: "skipped", c: "failed" },
        history: ["step_compensated a#2", "workflow_compensated"],
        effects: [],
      },
    },
    {
      name: "does not compensate a wait that timed out and was skipped",
      plan: plan([waitStep("approval", { event: "approved", timeoutMs: 100, onTimeout: "skip" }, { compensate: { type: "http", url: "https://remote.example/undo" } }), step("c")]),
      given: [{ wait: 100 }, { type: "DeadlinesReached" }, claimed("c")],
      when: failedPermanently("c"),
      then: {
        status: "compensated",
        steps: { approval: "skipped", c: "failed" },
        history: ["step_failed c#1", "compensation_started", "workflow_compensated"],
        effects: [],
        check: (result) => expect(result.history[1]?.data).toEqual({ steps: [], endStatus: "compensated" }),
      },
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));
});
