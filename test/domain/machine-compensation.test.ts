import { describe, expect, it } from "vitest";
import {
  accepted,
  claimed,
  deadlinesReached,
  describeEffects,
  expectTransition,
  failed,
  failedPermanently,
  plan,
  Run,
  step,
  stepOf,
  succeeded,
  undoable,
  wait,
  type Script,
  type TransitionCase,
} from "./builders";

const tick = deadlinesReached();

/** Two branches that can be undone, joined by a step that fails; `b` finishes before `a`. */
const branches = plan([
  undoable("a", { dependsOn: [] }),
  undoable("b", { dependsOn: [] }),
  step("join", { dependsOn: ["a", "b"] }),
]);
const JOIN_FAILED: Script = [
  claimed("a"),
  claimed("b"),
  succeeded("b"),
  succeeded("a"),
  claimed("join"),
  failedPermanently("join", 1, "card declined"),
];

/** `a` can be undone and may try its compensation twice, 300 ms apart; `b` fails. */
const twoTries = plan([undoable("a", { retry: { maxAttempts: 2, initialIntervalMs: 300 } }), step("b")]);
const UNDOING_A: Script = [claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b"), claimed("a", 2)];

const rows: TransitionCase[] = [
  {
    name: "starts with the step that completed last and compensates one step at a time",
    plan: branches,
    given: JOIN_FAILED.slice(0, -1),
    when: failedPermanently("join", 1, "card declined"),
    then: {
      status: "compensating",
      steps: { a: "compensating", b: "succeeded", join: "failed" },
      history: ["step_failed join#1", "compensation_started", "step_scheduled a#2"],
      effects: ["enqueue a#2 compensation"],
      check: (result) => {
        expect(result.history[1]?.data).toEqual({ steps: ["a", "b"], endStatus: "compensated" });
        expect(result.state.error).toEqual({ message: 'step "join" failed: card declined' });
      },
    },
  },
  {
    name: "moves on to the next step once a compensation succeeds",
    plan: branches,
    given: [...JOIN_FAILED, claimed("a", 2)],
    when: succeeded("a", 2),
    then: {
      status: "compensating",
      steps: { a: "compensated", b: "compensating" },
      history: ["step_compensated a#2", "step_scheduled b#2"],
      effects: ["enqueue b#2 compensation"],
    },
  },
  {
    name: "ends compensated when the last compensation succeeds",
    plan: branches,
    given: [...JOIN_FAILED, claimed("a", 2), succeeded("a", 2), claimed("b", 2), wait(30)],
    when: succeeded("b", 2),
    then: {
      status: "compensated",
      steps: { a: "compensated", b: "compensated", join: "failed" },
      history: ["step_compensated b#2", "workflow_compensated"],
      effects: [],
      check: (result, _before, now) => expect(result.state.endedAt).toBe(now),
    },
  },
  {
    name: "skips steps that have no compensate action",
    plan: plan([undoable("a"), step("b"), step("c"), step("d")]),
    given: [claimed("a"), succeeded("a"), claimed("b"), succeeded("b"), claimed("c")],
    when: failedPermanently("c"),
    then: {
      status: "compensating",
      steps: { a: "compensating", b: "succeeded", c: "failed", d: "cancelled" },
      history: ["step_failed c#1", "compensation_started", "step_scheduled a#2"],
      effects: ["enqueue a#2 compensation"],
      check: (result) => expect(result.history[1]?.data).toMatchObject({ steps: ["a"] }),
    },
  },
  {
    name: "ends compensated at once when nothing can be undone",
    plan: plan([step("a"), step("b")]),
    given: [claimed("a"), succeeded("a"), claimed("b")],
    when: failedPermanently("b"),
    then: {
      status: "compensated",
      steps: { a: "succeeded", b: "failed" },
      history: ["step_failed b#1", "compensation_started", "workflow_compensated"],
      effects: [],
    },
  },
  {
    name: "retries a compensation that failed transiently under its step's retry policy",
    plan: twoTries,
    given: UNDOING_A,
    when: failed("a", 2),
    then: {
      status: "compensating",
      steps: { a: "compensating" },
      history: ["step_failed a#2", "step_retry_scheduled a#2"],
      effects: [],
      check: (result, _before, now) => {
        expect(stepOf(result.state, "a").nextRetryAt).toBe(now + 300);
        expect(result.history[1]?.data).toMatchObject({ kind: "compensation", delayMs: 300 });
      },
    },
  },
  {
    name: "runs the compensation again once its backoff has passed",
    plan: twoTries,
    given: [...UNDOING_A, failed("a", 2), wait(300)],
    when: tick,
    then: {
      status: "compensating",
      steps: { a: "compensating" },
      history: ["step_scheduled a#3"],
      effects: ["enqueue a#3 compensation"],
    },
  },
  {
    name: "gives a compensation a fresh budget even when the step's action used all of it",
    plan: twoTries,
    given: [claimed("a"), failed("a", 1), wait(300), tick, claimed("a", 2), succeeded("a", 2), claimed("b"), failedPermanently("b"), claimed("a", 3)],
    when: failed("a", 3),
    then: { status: "compensating", steps: { a: "compensating" }, history: ["step_failed a#3", "step_retry_scheduled a#3"], effects: [] },
  },
  {
    name: "waits for an operator when a compensation has failed for good",
    plan: twoTries,
    given: [...UNDOING_A, failed("a", 2), wait(300), tick, claimed("a", 3)],
    when: failed("a", 3),
    then: {
      status: "needs_attention",
      steps: { a: "failed", b: "failed" },
      history: ["step_failed a#3", "workflow_escalated a"],
      effects: [],
      check: (result) => {
        expect(result.history[1]?.data).toMatchObject({ phase: "compensation" });
        expect(result.state.compensation?.queue).toEqual(["a"]);
      },
    },
  },
  {
    name: "waits for an operator at once when a compensation is refused permanently",
    plan: twoTries,
    given: UNDOING_A,
    when: failedPermanently("a", 2),
    then: { status: "needs_attention", steps: { a: "failed" }, history: ["step_failed a#2", "workflow_escalated a"], effects: [] },
  },
  {
    name: "retries a compensation whose agent stopped heartbeating",
    plan: twoTries,
    given: [...UNDOING_A, wait(1_000)],
    when: tick,
    then: {
      status: "compensating",
      steps: { a: "compensating" },
      history: ["step_heartbeat_missed a#2", "step_retry_scheduled a#2"],
      effects: [],
    },
  },
  {
    name: "fences a step still in flight and compensates it too, since its effect may have happened",
    plan: plan([undoable("a", { dependsOn: [] }), undoable("b", { dependsOn: [] })]),
    given: [claimed("a"), claimed("b")],
    when: failedPermanently("a"),
    then: {
      status: "compensating",
      steps: { a: "failed", b: "compensating" },
      history: ["step_failed a#1", "compensation_started", "step_scheduled b#2"],
      effects: ["enqueue b#2 compensation"],
      check: (result) => {
        expect(stepOf(result.state, "b").attempts[0]).toMatchObject({ status: "cancelled", kind: "action" });
        expect(result.history[1]?.data).toMatchObject({ steps: ["b"] });
      },
    },
  },
  {
    name: "compensates a step whose remote accepted the work and had not reported yet",
    plan: plan([undoable("a", { dependsOn: [] }), undoable("b", { dependsOn: [] })]),
    given: [claimed("a"), claimed("b"), accepted("b")],
    when: failedPermanently("a"),
    then: {
      status: "compensating",
      steps: { a: "failed", b: "compensating" },
      history: ["step_failed a#1", "compensation_started", "step_scheduled b#2"],
      effects: ["enqueue b#2 compensation"],
    },
  },
  {
    name: "compensates the most recently started in-flight step first, before the completed ones",
    plan: plan([undoable("done"), undoable("x", { dependsOn: ["done"] }), undoable("y", { dependsOn: ["done"] }), step("bad", { dependsOn: ["done"] })]),
    given: [claimed("done"), succeeded("done"), claimed("x"), wait(10), claimed("y"), claimed("bad")],
    when: failedPermanently("bad"),
    then: {
      status: "compensating",
      steps: { done: "succeeded", x: "cancelled", y: "compensating", bad: "failed" },
      history: ["step_failed bad#1", "compensation_started", "step_scheduled y#2"],
      effects: ["enqueue y#2 compensation"],
      check: (result) => expect(result.history[1]?.data).toMatchObject({ steps: ["y", "x", "done"] }),
    },
  },
  {
    name: "compensates a step backing off after a started attempt failed, since that attempt may have taken effect",
    plan: plan([undoable("a", { dependsOn: [] }), undoable("b", { dependsOn: [] })]),
    given: [claimed("a"), claimed("b"), failed("b", 1)],
    when: failedPermanently("a"),
    then: {
      status: "compensating",
      steps: { a: "failed", b: "compensating" },
      history: ["step_failed a#1", "compensation_started", "step_scheduled b#2"],
      effects: ["enqueue b#2 compensation"],
      check: (result) => expect(stepOf(result.state, "b").nextRetryAt).toBeUndefined(),
    },
  },
  {
    name: "cancels a step that was queued but never claimed without compensating it",
    plan: plan([undoable("a", { dependsOn: [] }), undoable("b", { dependsOn: [] })]),
    given: [claimed("a")],
    when: failedPermanently("a"),
    then: {
      status: "compensated",
      steps: { a: "failed", b: "cancelled" },
      history: ["step_failed a#1", "compensation_started", "workflow_compensated"],
      effects: [],
    },
  },
  {
    name: "refuses a late success from the fenced attempt of a step being compensated",
    plan: plan([undoable("a", { dependsOn: [] }), undoable("b", { dependsOn: [] })]),
    given: [claimed("a"), claimed("b"), failedPermanently("a")],
    when: succeeded("b", 1),
    then: {
      status: "compensating",
      steps: { b: "compensating" },
      history: ["stale_report_rejected b#1"],
      effects: [],
      reply: { ok: false, code: "stale_attempt" },
      check: (result) => expect(result.state.completionOrder).toEqual([]),
    },
  },
];

describe("compensation", () => {
  it.each(rows)("$name", (row) => expectTransition(row));

  it("ignores the workflow deadline while it unwinds", () => {
    const run = new Run(plan([undoable("a"), step("b")], { timeoutMs: 200 }));
    run.play([claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b"), claimed("a", 2), wait(300)]);

    const result = run.send(tick);

    expect(result.changed).toBe(false);
    expect(run.state.status).toBe("compensating");
  });
});

describe("a step that failed for good with an ambiguous outcome", () => {
  const oneTry = { retry: { maxAttempts: 1, initialIntervalMs: 100, backoffCoefficient: 2, maxIntervalMs: 1_000, jitter: 0 } };

  it("is compensated first when its last attempt timed out after starting: the remote may have applied it", () => {
    const run = new Run(plan([undoable("a"), undoable("b", oneTry)]));
    run.send(claimed("a"));
    run.send(succeeded("a"));
    run.send(claimed("b"));
    run.wait(5_001).send(deadlinesReached());
    expect(run.state.compensation?.queue).toEqual(["b", "a"]);
    expect(run.step("b")).toMatchObject({ status: "compensating" });
    expect(describeEffects(run.effects).slice(-1)).toEqual(["enqueue b#2 compensation"]);
  });

  it("is compensated when the request broke off without an answer (a network error)", () => {
    const run = new Run(plan([undoable("a", oneTry)]));
    run.send(claimed("a"));
    run.send(failed("a", 1, { error: { message: "network error: connection reset", retryable: true, status: undefined } }));
    expect(run.state.compensation?.queue).toEqual(["a"]);
  });

  it("is not compensated when the remote answered with a refusal: nothing was applied", () => {
    const run = new Run(plan([undoable("a"), undoable("b", oneTry)]));
    run.send(claimed("a"));
    run.send(succeeded("a"));
    run.send(claimed("b"));
    run.send(failedPermanently("b"));
    expect(run.state.compensation?.queue).toEqual(["a"]);
    expect(run.step("b").status).toBe("failed");
  });
});
