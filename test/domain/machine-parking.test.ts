import { describe, expect, it } from "vitest";
import { nextDeadlineAt, type WorkflowEvent } from "../../src/domain/machine";
import { PARKED_BACKSTOP_MS } from "../../src/domain/machine/parking";
import {
  cancelRequested,
  claimed,
  deadlinesReached,
  expectTransition,
  failed,
  failedPermanently,
  pauseRequested,
  plan,
  resumeRequested,
  Run,
  step,
  stepOf,
  succeeded,
  T0,
  undoable,
  wait,
  type Script,
  type TransitionCase,
} from "./builders";
import { checkState } from "./machine-state-invariants";

/** The host of every builder step (`https://remote.example/<id>`), as the claim names it. */
const HOST = "remote.example";
const OPEN_MS = 30_000;

/** The agent found the host's breaker open and made no request. */
const parked = (stepId: string, attempt = 1, openUntil = T0 + OPEN_MS): WorkflowEvent => ({ type: "AttemptParked", stepId, attempt, host: HOST, openUntil });
/** The host's breaker closed (or picked the step as its probe). */
const released = (stepId: string, host = HOST): WorkflowEvent => ({ type: "ParkedStepReleased", stepId, host });
const opened = (stepId: string, attempt = 1): WorkflowEvent => ({
  ...failed(stepId, attempt),
  circuitOpened: { host: HOST, failures: 5, openUntil: T0 + OPEN_MS },
});

const oneStep = plan([step("a")]);
const undoThenB = plan([undoable("a"), step("b")]);
/** `a` done, then `b` failed for good: `a`'s compensation (attempt 2) is claimed and about to call its host. */
const COMPENSATING: Script = [claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b"), claimed("a", 2)];

/** Every row also keeps the state's invariants. */
const checked = (row: TransitionCase): TransitionCase => ({
  ...row,
  then: {
    ...row.then,
    check: (result, before, now) => {
      checkState(result.state);
      row.then.check?.(result, before, now);
    },
  },
});

const parkingRows: TransitionCase[] = [
  {
    name: "parks the current attempt: it ends cancelled with nothing sent, its attempt is given back, the step waits in retrying",
    plan: oneStep,
    given: [claimed("a")],
    when: parked("a"),
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["step_parked a#1"],
      effects: [],
      reply: { ok: true },
      check: (result) => {
        const a = stepOf(result.state, "a");
        expect(a.budgetUsed).toBe(0);
        expect(a.parked).toEqual({ host: HOST, since: T0, openUntil: T0 + OPEN_MS });
        // The backstop, should the breaker's release be lost.
        expect(a.nextRetryAt).toBe(T0 + OPEN_MS + PARKED_BACKSTOP_MS);
        expect(a.attempts[0]).toMatchObject({ status: "cancelled", endedAt: T0, error: { message: `circuit open for ${HOST}`, retryable: true } });
        expect(a.attempts[0]?.startedAt).toBeUndefined();
        expect(result.history[0]?.data).toEqual({ host: HOST, kind: "action", openUntil: T0 + OPEN_MS });
      },
    },
  },
  {
    name: "parks a compensation attempt: the step stays compensating, at the head of the saga",
    plan: undoThenB,
    given: COMPENSATING,
    when: parked("a", 2),
    then: {
      status: "compensating",
      steps: { a: "compensating", b: "failed" },
      history: ["step_parked a#2"],
      effects: [],
      check: (result) => {
        expect(stepOf(result.state, "a")).toMatchObject({ budgetUsed: 0, parked: { host: HOST } });
        expect(result.history[0]?.data).toMatchObject({ kind: "compensation" });
      },
    },
  },
  {
    name: "parks an attempt that ran on into a pause: the backstop is held like any retry",
    plan: oneStep,
    given: [claimed("a"), pauseRequested()],
    when: parked("a"),
    then: {
      status: "paused",
      steps: { a: "retrying" },
      history: ["step_parked a#1"],
      effects: [],
      check: (result) => expect(nextDeadlineAt(result.state)).toBeUndefined(),
    },
  },
  {
    name: "gives the backstop a future even when the breaker's open period is already over (half-open)",
    plan: oneStep,
    given: [claimed("a"), wait(OPEN_MS + 5_000)],
    when: parked("a", 1, T0 + OPEN_MS),
    then: {
      status: "running",
      history: ["step_parked a#1"],
      effects: [],
      check: (result, _before, now) => expect(stepOf(result.state, "a").nextRetryAt).toBe(now + PARKED_BACKSTOP_MS),
    },
  },
  {
    name: "refuses to park an attempt that is no longer current",
    plan: oneStep,
    given: [claimed("a"), failed("a")],
    when: parked("a"),
    then: { status: "running", steps: { a: "retrying" }, history: ["stale_report_rejected a#1"], effects: [], changed: false, reply: { ok: false, code: "stale_attempt" } },
  },
  {
    name: "refuses to park an attempt of a workflow that has ended",
    plan: oneStep,
    given: [claimed("a"), cancelRequested()],
    when: parked("a"),
    then: { status: "cancelled", history: [], effects: [], changed: false, reply: { ok: false, code: "gone" } },
  },
  {
    name: "records circuit_opened before the failure whose report opened the breaker",
    plan: oneStep,
    given: [claimed("a")],
    when: opened("a"),
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["circuit_opened a#1", "step_failed a#1", "step_retry_scheduled a#1"],
      effects: [],
      check: (result) => expect(result.history[0]?.data).toEqual({ host: HOST, failures: 5, openUntil: T0 + OPEN_MS }),
    },
  },
  {
    name: "records no circuit_opened for a stale failure report",
    plan: oneStep,
    given: [claimed("a"), failed("a")],
    when: opened("a"),
    then: { status: "running", history: ["stale_report_rejected a#1"], effects: [], changed: false },
  },
  {
    name: "cancels a parked step without compensating it: its parked attempt sent nothing",
    plan: plan([undoable("a")]),
    given: [claimed("a"), parked("a")],
    when: cancelRequested(),
    then: {
      status: "cancelled",
      steps: { a: "cancelled" },
      history: ["operator_action", "compensation_started", "workflow_cancelled"],
      effects: [],
      check: (result) => {
        expect(stepOf(result.state, "a").parked).toBeUndefined();
        expect(result.history[1]?.data).toMatchObject({ steps: [] });
      },
    },
  },
];

const releaseRows: TransitionCase[] = [
  {
    name: "releases a parked action step: circuit_closed, then its next attempt at once",
    plan: oneStep,
    given: [claimed("a"), parked("a"), wait(1_000)],
    when: released("a"),
    then: {
      status: "running",
      steps: { a: "scheduled" },
      history: ["circuit_closed a", "step_scheduled a#2"],
      effects: ["enqueue a#2 action"],
      reply: { ok: true, released: true },
      check: (result) => {
        const a = stepOf(result.state, "a");
        expect(a.parked).toBeUndefined();
        expect(a.nextRetryAt).toBeUndefined();
        expect(a.budgetUsed).toBe(1);
        expect(result.history[0]?.data).toEqual({ host: HOST, parkedMs: 1_000 });
      },
    },
  },
  {
    name: "releases a parked compensation: the saga's head runs its next compensation attempt",
    plan: undoThenB,
    given: [...COMPENSATING, parked("a", 2)],
    when: released("a"),
    then: { status: "compensating", steps: { a: "compensating" }, history: ["circuit_closed a", "step_scheduled a#3"], effects: ["enqueue a#3 compensation"] },
  },
  {
    name: "releases a parked step of a paused workflow without starting it: the retry is due for the resume",
    plan: oneStep,
    given: [claimed("a"), pauseRequested(), parked("a"), wait(500)],
    when: released("a"),
    then: {
      status: "paused",
      steps: { a: "retrying" },
      history: ["circuit_closed a"],
      effects: [],
      check: (result, _before, now) => {
        expect(stepOf(result.state, "a").nextRetryAt).toBe(now);
        expect(stepOf(result.state, "a").parked).toBeUndefined();
      },
    },
  },
  {
    name: "ignores a release for another host",
    plan: oneStep,
    given: [claimed("a"), parked("a")],
    when: released("a", "other.example"),
    then: { status: "running", steps: { a: "retrying" }, history: [], effects: [], changed: false, reply: { ok: true, released: false } },
  },
  {
    name: "ignores a repeated release: the step already runs again",
    plan: oneStep,
    given: [claimed("a"), parked("a"), released("a")],
    when: released("a"),
    then: { status: "running", steps: { a: "scheduled" }, history: [], effects: [], changed: false, reply: { ok: true, released: false } },
  },
  {
    name: "ignores a release for a step that was never parked",
    plan: oneStep,
    given: [claimed("a"), failed("a")],
    when: released("a"),
    then: { status: "running", steps: { a: "retrying" }, history: [], effects: [], changed: false, reply: { ok: true, released: false } },
  },
  {
    name: "answers not_found for a step the workflow does not have",
    plan: oneStep,
    when: released("nope"),
    then: { status: "running", history: [], effects: [], changed: false, reply: { ok: false, code: "not_found" } },
  },
  {
    name: "retries a parked step by itself at the backstop when its release was lost",
    plan: oneStep,
    given: [claimed("a"), parked("a"), wait(OPEN_MS + PARKED_BACKSTOP_MS)],
    when: deadlinesReached(),
    then: {
      status: "running",
      steps: { a: "scheduled" },
      history: ["step_scheduled a#2"],
      effects: ["enqueue a#2 action"],
      check: (result) => expect(stepOf(result.state, "a").parked).toBeUndefined(),
    },
  },
  {
    name: "does not retry a parked step before its backstop",
    plan: oneStep,
    given: [claimed("a"), parked("a"), wait(OPEN_MS + PARKED_BACKSTOP_MS - 1)],
    when: deadlinesReached(),
    then: { status: "running", steps: { a: "retrying" }, history: [], effects: [] },
  },
];

describe("parking an attempt", () => {
  it.each(parkingRows.map(checked))("$name", (row) => expectTransition(row));
});

describe("releasing a parked step", () => {
  it.each(releaseRows.map(checked))("$name", (row) => expectTransition(row));

  it("starts a step released while paused when the workflow resumes", () => {
    const run = new Run(oneStep).play([claimed("a"), pauseRequested(), parked("a"), released("a"), wait(100)]);
    const resumed = run.send(resumeRequested());
    expect(resumed.history.map((entry) => `${entry.type} ${entry.attempt ?? ""}`.trim())).toEqual(["workflow_resumed", "step_scheduled 2"]);
    expect(run.step("a")).toMatchObject({ status: "scheduled", attempt: 2, budgetUsed: 1 });
    checkState(run.state);
  });

  it("keeps the whole retry budget for the attempts made after parking: maxAttempts real attempts, whatever was parked", () => {
    const run = new Run(oneStep).play([claimed("a"), parked("a"), released("a"), claimed("a", 2), parked("a", 2), released("a")]);
    // Three attempts of the policy's three are still to come.
    for (const n of [3, 4, 5]) {
      run.play([claimed("a", n), failed("a", n)]);
      checkState(run.state);
      if (n < 5) run.play([wait(1_000), deadlinesReached()]);
    }
    expect(run.step("a").status).toBe("failed");
    expect(run.step("a").attempts.map((attempt) => attempt.status)).toEqual(["cancelled", "cancelled", "failed", "failed", "failed"]);
    expect(run.state.status).toBe("compensated");
  });
});
