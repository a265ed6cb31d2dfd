import { describe, expect, it } from "vitest";
import { nextDeadlineAt } from "../../src/domain/machine";
import { MAX_TIMER_MS, type Sleep } from "../../src/domain/language/schemas";
import { toWorkflowView } from "../../src/domain/machine/view";
import {
  cancelRequested,
  claimed,
  deadlinesReached,
  describeHistory,
  expectTransition,
  failedPermanently,
  httpAction,
  plan,
  retryRequested,
  Run,
  sleepStep,
  step,
  stepOf,
  succeeded,
  T0,
  wait,
  type TransitionCase,
} from "./builders";

const tick = deadlinesReached();
const MINUTE = 60_000;

/** `a`, then a sleep whose `until` reads `a`'s output, then `b`; a failing sleep fails the workflow outright. */
const afterA = (until: Sleep["until"]) =>
  plan([step("a"), sleepStep("nap", { until }), step("b")], { onFailure: "fail" });
const untilFromA = afterA("{{ steps.a.output.at }}");

/** `a` succeeds at T0 with `{ at }`: the transition under test starts the sleep. */
const aReports = (at: unknown): TransitionCase["when"] => succeeded("a", 1, { at });

describe("a sleep step starts", () => {
  const sleepingUntil = (until: number): TransitionCase["then"] => ({
    status: "running",
    steps: { a: "succeeded", nap: "sleeping", b: "pending" },
    history: ["step_succeeded a#1", "step_sleeping nap"],
    effects: [],
    check: (result) => {
      const nap = stepOf(result.state, "nap");
      expect(nap).toMatchObject({ timerAt: until, attempt: 0, attempts: [] });
      expect(nap.output).toBeUndefined();
      expect(result.history[1]?.data).toEqual({ until });
      expect(nextDeadlineAt(result.state)).toBe(until);
    },
  });
  const awakeAtOnce = (until: number): TransitionCase["then"] => ({
    status: "running",
    steps: { a: "succeeded", nap: "succeeded", b: "scheduled" },
    history: ["step_succeeded a#1", "step_sleeping nap", "step_succeeded nap", "step_scheduled b#1"],
    effects: ["enqueue b#1 action"],
    check: (result) => {
      const nap = stepOf(result.state, "nap");
      expect(nap.output).toEqual({ sleptUntil: until });
      expect(nap.timerAt).toBeUndefined();
      expect(nap.attempts).toEqual([]);
      expect(result.history[2]).toEqual({ type: "step_succeeded", stepId: "nap" });
      expect(result.state.completionOrder).toEqual(["a", "nap"]);
    },
  });
  const failsWith = (message: string): TransitionCase["then"] => ({
    status: "failed",
    steps: { a: "succeeded", nap: "failed", b: "cancelled" },
    history: ["step_succeeded a#1", "step_failed nap", "workflow_failed"],
    effects: [],
    check: (result) => {
      const nap = stepOf(result.state, "nap");
      expect(nap.error).toEqual({ message, retryable: false });
      expect(nap).toMatchObject({ attempt: 0, attempts: [] });
      expect(nap.timerAt).toBeUndefined();
      expect(result.history[1]?.data).toEqual({ kind: "sleep", error: nap.error, final: true });
      expect(result.state.error).toEqual({ message: `step "nap" failed: ${message}` });
    },
  });

  const rows: TransitionCase[] = [
    {
      name: "by duration: it sleeps durationMs from the moment it is ready",
      plan: plan([step("a"), sleepStep("nap", { durationMs: MINUTE }), step("b")]),
      given: [claimed("a"), wait(250)],
      when: succeeded("a"),
      then: sleepingUntil(T0 + 250 + MINUTE),
    },
    {
      name: "by a templated until that renders to epoch milliseconds",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports(T0 + MINUTE),
      then: sleepingUntil(T0 + MINUTE),
    },
    {
      name: "by a templated until that renders to an ISO 8601 date-time",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports(new Date(T0 + MINUTE).toISOString()),
      then: sleepingUntil(T0 + MINUTE),
    },
    {
      name: "by a templated until that renders to an ISO 8601 date-time with an offset",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports("2023-11-15T00:14:20+02:00"),
      then: sleepingUntil(T0 + MINUTE),
    },
    {
      name: "by a templated until that renders to a numeric string (epoch milliseconds as text)",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports(String(T0 + MINUTE)),
      then: sleepingUntil(T0 + MINUTE),
    },
    {
      name: "by an until interpolated into a longer string, as long as the result is a date-time",
      plan: afterA("{{ steps.a.output.at }}T00:00:00Z"),
      given: [claimed("a")],
      when: aReports("2023-11-15"),
      then: sleepingUntil(Date.parse("2023-11-15T00:00:00Z")),
    },
    {
      name: "by a literal epoch-milliseconds until",
      plan: afterA(T0 + MINUTE),
      given: [claimed("a")],
      when: succeeded("a"),
      then: sleepingUntil(T0 + MINUTE),
    },
    {
      name: "up to exactly 365 days ahead",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports(T0 + MAX_TIMER_MS),
      then: sleepingUntil(T0 + MAX_TIMER_MS),
    },
    {
      name: "and succeeds at once, with no timer, when its until is already past",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports(T0 - MINUTE),
      then: awakeAtOnce(T0 - MINUTE),
    },
    {
      name: "and succeeds at once when its until is this very instant",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports(T0),
      then: awakeAtOnce(T0),
    },
    {
      name: "and succeeds at once for a duration of 0",
      plan: plan([step("a"), sleepStep("nap", { durationMs: 0 }), step("b")]),
      given: [claimed("a")],
      when: succeeded("a"),
      then: awakeAtOnce(T0),
    },
    {
      name: "and fails (not retryable) when its until is more than 365 days ahead",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports(T0 + MAX_TIMER_MS + 1),
      then: failsWith(`sleep.until is more than 365 days ahead (${new Date(T0 + MAX_TIMER_MS + 1).toISOString()})`),
    },
    {
      name: "and fails when its until renders to text that is no time",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports("next tuesday"),
      then: failsWith('sleep.until must be epoch milliseconds or an ISO 8601 date-time (got "next tuesday")'),
    },
    {
      name: "and fails when its until renders to a date in another format",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports("11/15/2023"),
      then: failsWith('sleep.until must be epoch milliseconds or an ISO 8601 date-time (got "11/15/2023")'),
    },
    {
      name: "and fails when its until renders to a negative number",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports(-1),
      then: failsWith('sleep.until must be epoch milliseconds or an ISO 8601 date-time (got -1)'),
    },
    {
      name: "and fails when its until renders to a boolean",
      plan: untilFromA,
      given: [claimed("a")],
      when: aReports(true),
      then: failsWith('sleep.until must be epoch milliseconds or an ISO 8601 date-time (got true)'),
    },
    {
      name: "and fails when its until reads a value that is not there",
      plan: afterA("{{ steps.a.output.missing }}"),
      given: [claimed("a")],
      when: aReports(T0),
      then: failsWith('sleep.until: template "steps.a.output.missing" has no value'),
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));

  it("reads the workflow input in its until as soon as the workflow starts", () => {
    const run = new Run(plan([sleepStep("nap", { until: "{{ input.releaseAt }}" })]), { input: { releaseAt: new Date(T0 + MINUTE).toISOString() } });
    expect(run.state.status).toBe("running");
    expect(run.step("nap")).toMatchObject({ status: "sleeping", timerAt: T0 + MINUTE });
    expect(run.effects).toEqual([]);
  });

  it("escalates instead when the workflow's onFailure says so, and an operator's retry renders the until again", () => {
    const run = new Run(plan([sleepStep("nap", { until: "{{ input.at }}" }), step("b")], { onFailure: "escalate" }), { input: { at: "soon" } });
    expect(run.state.status).toBe("needs_attention");
    expect(describeHistory(run.log)).toEqual(["workflow_started", "step_failed nap", "workflow_escalated nap"]);
    expect(run.step("nap").status).toBe("failed");

    const retried = run.send(retryRequested("nap"));
    expect(describeHistory(retried.history)).toEqual(["operator_action nap", "step_failed nap", "workflow_escalated nap"]);
    expect(run.state.status).toBe("needs_attention");
  });

  it("shows when it wakes in the view, and no attempts", () => {
    const run = new Run(plan([sleepStep("nap", { durationMs: MINUTE })]));
    const view = toWorkflowView(run.state);
    expect(view.steps[0]).toEqual({ id: "nap", kind: "sleep", dependsOn: [], status: "sleeping", attempt: 0, sleepingUntil: T0 + MINUTE, attempts: [] });
  });
});

describe("a sleeping step wakes", () => {
  const napping = plan([sleepStep("nap", { durationMs: MINUTE }), step("b")]);

  const rows: TransitionCase[] = [
    {
      name: "not before its time: a tick a moment early changes nothing",
      plan: napping,
      given: [wait(MINUTE - 1)],
      when: tick,
      then: { status: "running", steps: { nap: "sleeping", b: "pending" }, history: [], effects: [], changed: false },
    },
    {
      name: "at its time, with no attempt: it succeeds with the time it slept until and its dependents start",
      plan: napping,
      given: [wait(MINUTE)],
      when: tick,
      then: {
        status: "running",
        steps: { nap: "succeeded", b: "scheduled" },
        history: ["step_succeeded nap", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
        check: (result) => {
          const nap = stepOf(result.state, "nap");
          expect(nap).toMatchObject({ output: { sleptUntil: T0 + MINUTE }, attempt: 0, attempts: [] });
          expect(nap.timerAt).toBeUndefined();
        },
      },
    },
    {
      name: "late, when the alarm fired late: the output still names the time it was due",
      plan: napping,
      given: [wait(MINUTE + 5_000)],
      when: tick,
      then: {
        status: "running",
        steps: { nap: "succeeded", b: "scheduled" },
        history: ["step_succeeded nap", "step_scheduled b#1"],
        effects: ["enqueue b#1 action"],
        check: (result) => expect(stepOf(result.state, "nap").output).toEqual({ sleptUntil: T0 + MINUTE }),
      },
    },
    {
      name: "as the last step: the workflow completes with its output",
      plan: plan([sleepStep("nap", { durationMs: MINUTE })]),
      given: [wait(MINUTE)],
      when: tick,
      then: {
        status: "completed",
        steps: { nap: "succeeded" },
        history: ["step_succeeded nap", "workflow_completed"],
        effects: [],
        check: (result) => expect(result.state.output).toEqual({ nap: { sleptUntil: T0 + MINUTE } }),
      },
    },
    {
      name: "and nothing else does: an agent's report naming the sleeping step is stale",
      plan: napping,
      given: [wait(10)],
      when: succeeded("nap"),
      then: {
        status: "running",
        steps: { nap: "sleeping" },
        history: ["stale_report_rejected nap#1"],
        effects: [],
        changed: false,
        reply: { ok: false, code: "stale_attempt" },
      },
    },
    {
      name: "never once cancelled: cancel stops the sleep and there is nothing to compensate",
      plan: napping,
      given: [wait(10)],
      when: cancelRequested(),
      then: {
        status: "cancelled",
        steps: { nap: "cancelled", b: "cancelled" },
        history: ["operator_action", "compensation_started", "workflow_cancelled"],
        effects: [],
        check: (result) => {
          expect(stepOf(result.state, "nap").timerAt).toBeUndefined();
          expect(nextDeadlineAt(result.state)).toBeUndefined();
        },
      },
    },
    {
      name: "and is undone by its compensate action (its only attempt) when a later step fails",
      plan: plan([sleepStep("hold", { durationMs: 0 }, { compensate: httpAction("release") }), step("b")]),
      given: [claimed("b")],
      when: failedPermanently("b"),
      then: {
        status: "compensating",
        steps: { hold: "compensating", b: "failed" },
        history: ["step_failed b#1", "compensation_started", "step_scheduled hold#1"],
        effects: ["enqueue hold#1 compensation"],
        check: (result) => expect(result.state.compensation?.queue).toEqual(["hold"]),
      },
    },
  ];

  it.each(rows)("$name", (row) => expectTransition(row));

  it("is supervised by the workflow's one deadline: the earliest of its timer and an attempt's deadline", () => {
    const run = new Run(plan([sleepStep("nap", { durationMs: MINUTE }), step("b", { dependsOn: [] })]));
    expect(nextDeadlineAt(run.state)).toBe(T0 + 500);
    run.send(claimed("b"));
    run.send(succeeded("b"));
    expect(nextDeadlineAt(run.state)).toBe(T0 + MINUTE);
  });
});
