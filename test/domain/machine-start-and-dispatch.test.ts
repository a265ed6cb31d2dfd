import { describe, expect, it } from "vitest";
import { startWorkflow, transition } from "../../src/domain/machine";
import type { WorkflowState } from "../../src/domain/machine/state";
import {
  cancelRequested,
  claimed,
  deadlinesReached,
  describeEffects,
  describeHistory,
  expectTransition,
  failed,
  failedPermanently,
  fixedRandom,
  heartbeat,
  plan,
  Run,
  step,
  stepOf,
  stepStatuses,
  succeeded,
  T0,
  undoable,
  wait,
  type TransitionCase,
} from "./builders";

describe("starting a workflow", () => {
  const rows = [
    {
      name: "dispatches only the first step of a plain list, since each step waits for the one before",
      steps: [step("a"), step("b"), step("c")],
      scheduled: ["a"],
      pending: ["b", "c"],
    },
    {
      name: "dispatches the roots of parallel branches together",
      steps: [step("a", { dependsOn: [] }), step("b", { dependsOn: [] }), step("join", { dependsOn: ["a", "b"] })],
      scheduled: ["a", "b"],
      pending: ["join"],
    },
    {
      name: "treats a step with an empty dependsOn as a root wherever it sits in the list",
      steps: [step("a"), step("b"), step("c", { dependsOn: [] })],
      scheduled: ["a", "c"],
      pending: ["b"],
    },
  ];

  it.each(rows)("$name", ({ steps, scheduled, pending }) => {
    const result = startWorkflow({ tenant: "acme", id: "wf-start-roots", plan: plan(steps), input: {}, now: T0 }, fixedRandom);

    expect(describeHistory(result.history)).toEqual(["workflow_started", ...scheduled.map((id) => `step_scheduled ${id}#1`)]);
    expect(describeEffects(result.effects)).toEqual(scheduled.map((id) => `enqueue ${id}#1 action`));
    expect(stepStatuses(result.state, [...scheduled, ...pending])).toEqual({
      ...Object.fromEntries(scheduled.map((id) => [id, "scheduled"])),
      ...Object.fromEntries(pending.map((id) => [id, "pending"])),
    });
  });

  it("starts running at version 1, with the first attempt queued at the start time", () => {
    const result = startWorkflow({ tenant: "acme", id: "wf-start-state", plan: plan([step("a")]), input: undefined, now: T0 });

    expect(result.state).toMatchObject({
      tenant: "acme",
      id: "wf-start-state",
      name: "test-flow",
      status: "running",
      input: null,
      version: 1,
      createdAt: T0,
      updatedAt: T0,
      completionOrder: [],
    });
    expect(result.state.deadlineAt).toBeUndefined();
    expect(result.history[0]).toEqual({ type: "workflow_started", data: { name: "test-flow" } });
    expect(stepOf(result.state, "a")).toMatchObject({
      status: "scheduled",
      attempt: 1,
      budgetUsed: 1,
      attempts: [{ n: 1, kind: "action", status: "scheduled", scheduledAt: T0 }],
    });
  });

  it("sets the whole-workflow deadline timeoutMs after the start", () => {
    const result = startWorkflow({ tenant: "acme", id: "wf-start-deadline", plan: plan([step("a")], { timeoutMs: 60_000 }), input: 1, now: T0 });

    expect(result.state.deadlineAt).toBe(T0 + 60_000);
    expect(result.state.input).toBe(1);
  });

  it("keeps the definition it runs and the schedule that started it, in its state and its first history event", () => {
    const definition = { name: "test-flow", version: 3, hash: "ef".repeat(32) };

    const result = startWorkflow({ tenant: "acme", id: "nightly:1700000000000", plan: plan([step("a")]), input: null, now: T0, definition, schedule: "nightly" });

    expect(result.state).toMatchObject({ definition, schedule: "nightly" });
    expect(result.history[0]).toEqual({ type: "workflow_started", data: { name: "test-flow", definition, schedule: "nightly" } });
  });
});

const orderAction = {
  type: "http" as const,
  url: "https://remote.example/orders/{{ input.orderId }}",
  method: "PUT" as const,
  headers: { "X-Workflow": "{{ workflow.id }}" },
  body: { amount: "{{ input.amount }}", note: "order {{ input.orderId }} of {{ workflow.id }}", fixed: [1, true, null] },
};

const claimRows: TransitionCase[] = [
  {
    name: "a claim starts the attempt and hands the agent its action with every template rendered",
    id: "wf-claim-render",
    plan: plan([step("a", { action: orderAction })]),
    input: { orderId: "o-17", amount: 42 },
    given: [wait(100)],
    when: claimed("a", 1),
    then: {
      status: "running",
      steps: { a: "running" },
      history: ["step_started a#1"],
      effects: [],
      check: (result) => {
        expect(result.reply).toEqual({
          ok: true,
          task: {
            workflowId: "wf-claim-render",
            stepId: "a",
            attempt: 1,
            kind: "action",
            action: {
              type: "http",
              url: "https://remote.example/orders/o-17",
              method: "PUT",
              headers: { "X-Workflow": "wf-claim-render" },
              body: { amount: 42, note: "order o-17 of wf-claim-render", fixed: [1, true, null] },
            },
            idempotencyKey: "wf-claim-render:a",
            deadlineAt: T0 + 100 + 5_000,
            startToCloseMs: 5_000,
            heartbeatMs: 1_000,
            // The breaker the attempt answers to: the rendered URL's host, with the default settings.
            host: "remote.example",
            breaker: { failures: 5, openMs: 30_000 },
          },
        });
        const a = stepOf(result.state, "a");
        expect(a.attempts[0]).toMatchObject({ status: "running", startedAt: T0 + 100, lastHeartbeatAt: T0 + 100 });
        expect(a.lastHeartbeatAt).toBe(T0 + 100);
      },
    },
  },
  {
    name: "a claim renders an upstream step's output and attempt number into the action",
    plan: plan([step("a"), step("b", { action: { type: "http", url: "https://remote.example/b", body: { charge: "{{ steps.a.output.id }}", tries: "{{ steps.a.attempt }}" } } })]),
    given: [claimed("a"), succeeded("a", 1, { id: "ch_9" })],
    when: claimed("b", 1),
    then: {
      status: "running",
      steps: { b: "running" },
      history: ["step_started b#1"],
      effects: [],
      reply: { ok: true, task: { action: { body: { charge: "ch_9", tries: 1 } } } },
    },
  },
  {
    name: "a claim of a later attempt carries the same idempotency key as the first",
    id: "wf-claim-retry",
    plan: plan([step("a")]),
    given: [claimed("a"), failed("a", 1), wait(100), deadlinesReached()],
    when: claimed("a", 2),
    then: {
      status: "running",
      steps: { a: "running" },
      history: ["step_started a#2"],
      effects: [],
      reply: { ok: true, task: { attempt: 2, idempotencyKey: "wf-claim-retry:a" } },
    },
  },
  {
    name: "a claim of a compensation hands over the compensate action under the :compensate idempotency key",
    id: "wf-claim-undo",
    plan: plan([
      step("a", { compensate: { type: "http", url: "https://remote.example/refund", body: { charge: "{{ steps.a.output.id }}" } } }),
      step("b"),
    ]),
    given: [claimed("a"), succeeded("a", 1, { id: "ch_1" }), claimed("b"), failedPermanently("b")],
    when: claimed("a", 2),
    then: {
      status: "compensating",
      steps: { a: "compensating", b: "failed" },
      history: ["step_started a#2"],
      effects: [],
      reply: {
        ok: true,
        task: {
          attempt: 2,
          kind: "compensation",
          action: { type: "http", url: "https://remote.example/refund", body: { charge: "ch_1" } },
          idempotencyKey: "wf-claim-undo:a:compensate",
        },
      },
    },
  },
  {
    name: "a second claim of the same attempt is refused as already claimed and changes nothing",
    plan: plan([step("a")]),
    given: [claimed("a")],
    when: claimed("a", 1),
    then: { status: "running", steps: { a: "running" }, history: [], effects: [], changed: false, reply: { ok: false, code: "already_claimed" } },
  },
  {
    name: "a claim whose template cannot resolve fails the attempt for good instead of retrying it",
    plan: plan([step("a"), step("b", { action: { type: "http", url: "https://remote.example/b", body: { id: "{{ steps.a.output.missing }}" } } })], {
      onFailure: "fail",
    }),
    given: [claimed("a"), succeeded("a", 1, { present: true })],
    when: claimed("b", 1),
    then: {
      status: "failed",
      steps: { a: "succeeded", b: "failed" },
      history: ["step_started b#1", "step_failed b#1", "workflow_failed"],
      effects: [],
      reply: { ok: false, code: "render_failed", message: 'template "steps.a.output.missing" has no value' },
      check: (result) => {
        expect(stepOf(result.state, "b").attempts[0]).toMatchObject({ status: "failed", error: { retryable: false } });
      },
    },
  },
  {
    name: "a claim for a step the workflow does not have is not found",
    plan: plan([step("a")]),
    when: claimed("nope", 1),
    then: { status: "running", history: [], effects: [], changed: false, reply: { ok: false, code: "not_found" } },
  },
];

describe("claiming an attempt", () => {
  it.each(claimRows)("$name", (row) => expectTransition(row));
});

const dispatchRows: TransitionCase[] = [
  {
    name: "a success dispatches the step that depends on it",
    plan: plan([step("a"), step("b"), step("c")]),
    given: [claimed("a")],
    when: succeeded("a", 1, { id: "A" }),
    then: {
      status: "running",
      steps: { a: "succeeded", b: "scheduled", c: "pending" },
      history: ["step_succeeded a#1", "step_scheduled b#1"],
      effects: ["enqueue b#1 action"],
      reply: { ok: true },
      check: (result) => {
        expect(stepOf(result.state, "a").output).toEqual({ id: "A" });
        expect(result.state.completionOrder).toEqual(["a"]);
      },
    },
  },
  {
    name: "a fan-in step waits while any of its dependencies is still running",
    plan: plan([step("a", { dependsOn: [] }), step("b", { dependsOn: [] }), step("join", { dependsOn: ["a", "b"] })]),
    given: [claimed("a"), claimed("b")],
    when: succeeded("a"),
    then: { status: "running", steps: { a: "succeeded", b: "running", join: "pending" }, history: ["step_succeeded a#1"], effects: [] },
  },
  {
    name: "a fan-in step is dispatched once its last dependency succeeds",
    plan: plan([step("a", { dependsOn: [] }), step("b", { dependsOn: [] }), step("join", { dependsOn: ["a", "b"] })]),
    given: [claimed("a"), claimed("b"), succeeded("a")],
    when: succeeded("b"),
    then: {
      status: "running",
      steps: { a: "succeeded", b: "succeeded", join: "scheduled" },
      history: ["step_succeeded b#1", "step_scheduled join#1"],
      effects: ["enqueue join#1 action"],
    },
  },
  {
    name: "the last success completes the workflow with every step's output",
    plan: plan([step("a"), step("b")]),
    given: [claimed("a"), succeeded("a", 1, { id: "A" }), claimed("b"), wait(250)],
    when: succeeded("b", 1, { id: "B" }),
    then: {
      status: "completed",
      steps: { a: "succeeded", b: "succeeded" },
      history: ["step_succeeded b#1", "workflow_completed"],
      effects: [],
      check: (result) => {
        expect(result.state.output).toEqual({ a: { id: "A" }, b: { id: "B" } });
        expect(result.state.endedAt).toBe(T0 + 250);
      },
    },
  },
  {
    name: "a success without output counts as null in the workflow's output",
    plan: plan([step("a")]),
    given: [claimed("a")],
    when: { type: "AttemptSucceeded", stepId: "a", attempt: 1, output: undefined },
    then: {
      status: "completed",
      history: ["step_succeeded a#1", "workflow_completed"],
      effects: [],
      check: (result) => expect(result.state.output).toEqual({ a: null }),
    },
  },
];

describe("dispatching after a success", () => {
  it.each(dispatchRows)("$name", (row) => expectTransition(row));
});

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

describe("transition", () => {
  const events = [
    { name: "a claim", given: [], event: claimed("a") },
    { name: "a heartbeat", given: [claimed("a")], event: heartbeat("a", 1, { value: { page: 1 } }) },
    { name: "a success", given: [claimed("a")], event: succeeded("a") },
    { name: "a transient failure", given: [claimed("a")], event: failed("a") },
    { name: "a permanent failure", given: [claimed("a")], event: failedPermanently("a") },
    { name: "a missed heartbeat", given: [claimed("a"), wait(1_000)], event: deadlinesReached() },
    { name: "a cancel", given: [claimed("a")], event: cancelRequested() },
  ];

  it.each(events)("never mutates the state it is given, even for $name", ({ given, event }) => {
    const run = new Run(plan([undoable("a"), undoable("b")])).play(given);
    const frozen: WorkflowState = deepFreeze(structuredClone(run.state));
    const snapshot = structuredClone(frozen);

    const result = transition(frozen, event, run.now, fixedRandom);

    expect(frozen).toEqual(snapshot);
    expect(result.state).not.toBe(frozen);
    expect(result.changed).toBe(true);
  });

  it("raises the version by one and stamps updatedAt when something changed", () => {
    const run = new Run(plan([step("a")])).wait(40);
    const result = transition(run.state, claimed("a"), run.now, fixedRandom);

    expect(result.changed).toBe(true);
    expect(result.state.version).toBe(run.state.version + 1);
    expect(result.state.updatedAt).toBe(T0 + 40);
  });

  it("keeps the version and updatedAt when nothing changed", () => {
    const run = new Run(plan([step("a")])).wait(40);
    const result = transition(run.state, deadlinesReached(), run.now, fixedRandom);

    expect(result.changed).toBe(false);
    expect(result.state.version).toBe(run.state.version);
    expect(result.state.updatedAt).toBe(T0);
  });
});
