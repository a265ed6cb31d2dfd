import { describe, expect, it } from "vitest";
import { nextDeadlineAt, startWorkflow } from "../../src/domain/machine";
import { nextDeadline } from "../../src/domain/machine/deadlines";
import { diagnose } from "../../src/domain/machine/diagnosis";
import { MAX_START_DEFERRAL_MS } from "../../src/domain/machine/scheduled-start";
import { toWorkflowView } from "../../src/domain/machine/view";
import {
  cancelRequested,
  deadlinesReached,
  describeEffects,
  describeHistory,
  eventReceived,
  expectTransition,
  fixedRandom,
  pauseRequested,
  plan,
  redriveRequested,
  resumeRequested,
  Run,
  step,
  T0,
  terminateRequested,
  undoable,
  wait,
  waitStep,
  type TransitionCase,
} from "./builders";

const MINUTE = 60_000;
const START = T0 + 10 * MINUTE;
const tick = deadlinesReached();
const overloaded = (retryAfterSeconds = 5) => ({ type: "DeadlinesReached" as const, startAdmission: { overloaded: true as const, lagMs: 15_000, retryAfterSeconds } });
const admitted = { type: "DeadlinesReached" as const, startAdmission: { overloaded: false as const } };

const twoSteps = plan([undoable("a"), step("b")]);
const timed = plan([step("a")], { timeoutMs: 60_000 });

describe("a start with a start time", () => {
  it("is created scheduled, its steps pending and nothing dispatched: its start time is its one deadline", () => {
    const started = startWorkflow({ tenant: "acme", id: "later", plan: twoSteps, input: null, now: T0, startAt: START }, fixedRandom);

    expect(started.state).toMatchObject({ status: "scheduled", startAt: START, createdAt: T0 });
    expect(started.state.steps.map((s) => s.status)).toEqual(["pending", "pending"]);
    expect(describeEffects(started.effects)).toEqual([]);
    expect(started.history).toEqual([{ type: "workflow_scheduled", data: { name: "test-flow", startAt: START } }]);
    expect(nextDeadline(started.state)).toEqual({ at: START, reason: "scheduled_start" });
    expect(toWorkflowView(started.state)).toMatchObject({ status: "scheduled", startAt: START });
  });

  it("starts at once when the time is not ahead (a delay of 0), as a start without one", () => {
    const started = startWorkflow({ tenant: "acme", id: "now", plan: twoSteps, input: null, now: T0, startAt: T0 }, fixedRandom);

    expect(started.state.status).toBe("running");
    expect(started.state.startAt).toBeUndefined();
    expect(describeHistory(started.history)).toEqual(["workflow_started", "step_scheduled a#1"]);
  });

  it("counts the workflow's timeout from its start, not from its creation", () => {
    const run = new Run(timed, { startAt: START });
    expect(run.state.deadlineAt).toBeUndefined();

    run.wait(START - T0).send(tick);

    expect(run.state.deadlineAt).toBe(START + 60_000);
  });

  it("names the start in the diagnosis, and is healthy with its alarm at the start time", () => {
    const run = new Run(twoSteps, { startAt: START });

    const diagnosis = diagnose(run.state, { alarmAt: START, recentDecisions: [] });

    expect(diagnosis.healthy).toBe(true);
    expect(diagnosis.blockedOn).toEqual([expect.objectContaining({ reason: "scheduled_start", since: T0, until: START })]);
  });
});

describe("a scheduled workflow", () => {
  const rows: TransitionCase[] = [
    {
      name: "is left alone by a tick before its start time",
      plan: twoSteps,
      startAt: START,
      given: [wait(START - T0 - 1)],
      when: tick,
      then: { status: "scheduled", history: [], effects: [], changed: false, steps: { a: "pending", b: "pending" } },
    },
    {
      name: "starts at its start time: workflow_started, then its first steps dispatched",
      plan: twoSteps,
      startAt: START,
      given: [wait(START - T0)],
      when: tick,
      then: {
        status: "running",
        history: ["workflow_started", "step_scheduled a#1"],
        effects: ["enqueue a#1 action"],
        steps: { a: "scheduled", b: "pending" },
        check: (result) => {
          expect(result.history[0]?.data).toEqual({ name: "test-flow", startAt: START });
          expect(result.state.startAt).toBe(START);
        },
      },
    },
    {
      name: "starts when the admission at its time lets it",
      plan: twoSteps,
      startAt: START,
      given: [wait(START - T0 + 50)],
      when: admitted,
      then: { status: "running", history: ["workflow_started", "step_scheduled a#1"], effects: ["enqueue a#1 action"] },
    },
    {
      name: "is deferred, not dropped, while back-pressure refuses starts like it: recorded once, tried again after Retry-After",
      plan: twoSteps,
      startAt: START,
      given: [wait(START - T0)],
      when: overloaded(5),
      then: {
        status: "scheduled",
        history: ["workflow_start_deferred"],
        effects: [],
        check: ({ state, history }) => {
          expect(state.startRetryAt).toBe(START + 5_000);
          expect(history[0]?.data).toEqual({ lagMs: 15_000, retryAt: START + 5_000 });
          expect(nextDeadline(state)).toEqual({ at: START + 5_000, reason: "scheduled_start" });
        },
      },
    },
    {
      name: "deferred again without another history entry",
      plan: twoSteps,
      startAt: START,
      given: [wait(START - T0), overloaded(5), wait(5_000)],
      when: overloaded(5),
      then: { status: "scheduled", history: [], effects: [], changed: true, check: ({ state }) => expect(state.startRetryAt).toBe(START + 10_000) },
    },
    {
      name: "after a deferral, starts once admitted, saying how long it was deferred",
      plan: twoSteps,
      startAt: START,
      given: [wait(START - T0), overloaded(5), wait(5_000)],
      when: admitted,
      then: {
        status: "running",
        history: ["workflow_started", "step_scheduled a#1"],
        effects: ["enqueue a#1 action"],
        check: ({ state, history }) => {
          expect(history[0]?.data).toMatchObject({ startAt: START, deferredMs: 5_000 });
          expect(state.startRetryAt).toBeUndefined();
        },
      },
    },
    {
      name: "starts regardless once deferred for MAX_START_DEFERRAL_MS: no client can retry it",
      plan: twoSteps,
      startAt: START,
      given: [wait(START - T0), overloaded(30), wait(MAX_START_DEFERRAL_MS)],
      when: overloaded(30),
      then: { status: "running", history: ["workflow_started", "step_scheduled a#1"], effects: ["enqueue a#1 action"] },
    },
    {
      name: "is cancelled at once: nothing ran, so nothing is compensated",
      plan: twoSteps,
      startAt: START,
      given: [wait(1_000)],
      when: cancelRequested(),
      then: {
        status: "cancelled",
        history: ["operator_action", "workflow_cancelled"],
        effects: [],
        steps: { a: "cancelled", b: "cancelled" },
        reply: { ok: true },
        check: ({ state }) => {
          expect(state.endedAt).toBe(T0 + 1_000);
          expect(state.compensation).toBeUndefined();
          expect(nextDeadlineAt(state)).toBeUndefined();
        },
      },
    },
    {
      name: "is cancelled while its start is deferred, which ends the deferral",
      plan: twoSteps,
      startAt: START,
      given: [wait(START - T0), overloaded(5)],
      when: cancelRequested(),
      then: { status: "cancelled", history: ["operator_action", "workflow_cancelled"], effects: [], check: ({ state }) => expect(state.startRetryAt).toBeUndefined() },
    },
    {
      name: "is terminated at once, its steps cancelled",
      plan: twoSteps,
      startAt: START,
      when: terminateRequested("not needed after all"),
      then: {
        status: "terminated",
        history: ["workflow_terminated"],
        effects: [],
        steps: { a: "cancelled", b: "cancelled" },
        reply: { ok: true },
        check: ({ state }) => expect(nextDeadlineAt(state)).toBeUndefined(),
      },
    },
    {
      name: "refuses a pause: nothing runs to pause",
      plan: twoSteps,
      startAt: START,
      when: pauseRequested(),
      then: { status: "scheduled", history: [], effects: [], changed: false, reply: { ok: false, code: "conflict", message: expect.stringContaining("has not started") } },
    },
    {
      name: "refuses a resume: it is not paused",
      plan: twoSteps,
      startAt: START,
      when: resumeRequested(),
      then: { status: "scheduled", history: [], effects: [], changed: false, reply: { ok: false, code: "conflict" } },
    },
    {
      name: "keeps an event in its inbox until a wait for it starts",
      plan: plan([waitStep("approval", { event: "approved", timeoutMs: MINUTE })]),
      startAt: START,
      when: eventReceived("approved"),
      then: { status: "scheduled", history: ["event_received"], effects: [], reply: { ok: true, consumed: false }, check: ({ state }) => expect(state.inbox).toHaveLength(1) },
    },
    {
      name: "redriven after a cancel, runs at once",
      plan: twoSteps,
      startAt: START,
      given: [cancelRequested()],
      when: redriveRequested(),
      then: { status: "running", history: ["workflow_redriven", "step_scheduled a#1"], effects: ["enqueue a#1 action"] },
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));

  it("hands an event kept while scheduled to the wait its start begins", () => {
    const run = new Run(plan([waitStep("approval", { event: "approved", timeoutMs: MINUTE }), step("b")]), { startAt: START });
    run.send(eventReceived("approved"));

    run.wait(START - T0).send(tick);

    expect(run.state.status).toBe("running");
    expect(run.step("approval").status).toBe("succeeded");
    expect(run.step("b").status).toBe("scheduled");
  });
});
