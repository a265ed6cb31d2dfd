import { describe, expect, it } from "vitest";
import { nextDeadline } from "../../src/domain/machine/deadlines";
import {
  claimed,
  compensationRequested,
  deadlinesReached,
  expectTransition,
  failed,
  failedPermanently,
  heartbeat,
  plan,
  Run,
  step,
  stepOf,
  succeeded,
  T0,
  undoable,
  wait,
  type TransitionCase,
} from "./builders";

const tick = deadlinesReached();
const progress = (value: unknown) => ({ value });

/** Heartbeats due every second, attempts may run 30 s, and progress must move within 2 s. */
const STALLING = plan([step("a", { timeouts: { startToCloseMs: 30_000, heartbeatMs: 1_000, progressMs: 2_000 } })]);

/** b fails for good; the workflow waits 10 s on an operator, then does `then` itself. */
const escalating = (then: "compensate" | "fail" | "skip" | "retry") =>
  plan([undoable("a"), step("b")], { onFailure: { escalate: { afterMs: 10_000, then } } });
const EXPIRED_AFTER_B_FAILED = [claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b"), wait(10_000)];

const stallRows: TransitionCase[] = [
  {
    name: "ends an attempt whose heartbeats go on with the same progress for progressMs as stalled, and retries it like a timeout",
    plan: STALLING,
    given: [claimed("a"), wait(500), heartbeat("a", 1, progress({ done: 47 })), wait(900), heartbeat("a", 1, progress({ done: 47 })), wait(900), heartbeat("a", 1, progress({ done: 47 })), wait(700)],
    when: tick,
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["step_stalled a#1", "step_retry_scheduled a#1"],
      effects: [],
      check: (result) => {
        const a = stepOf(result.state, "a");
        expect(a.attempts[0]).toMatchObject({ status: "timed_out", error: { retryable: true, timeout: "stalled" } });
        expect(result.history[0]?.data).toEqual({ progressMs: 2_000, progressAt: T0 + 500, deadlineAt: T0 + 2_500, overdueMs: 500 });
      },
    },
  },
  {
    name: "keeps an attempt whose progress moves: each change restarts the stall clock",
    plan: STALLING,
    given: [claimed("a"), wait(500), heartbeat("a", 1, progress({ done: 47 })), wait(900), heartbeat("a", 1, progress({ done: 48 })), wait(900), heartbeat("a", 1, progress({ done: 48 })), wait(700)],
    when: tick,
    then: {
      status: "running",
      steps: { a: "running" },
      history: [],
      effects: [],
      check: (result) => expect(nextDeadline(result.state)).toEqual({ at: T0 + 3_300, reason: "heartbeat", stepId: "a" }),
    },
  },
  {
    name: "never stalls on heartbeats that carry no progress (the agent's own while it waits for an answer)",
    plan: STALLING,
    given: [claimed("a"), ...Array.from({ length: 9 }, () => [wait(900), heartbeat("a")]).flat(), wait(100)],
    when: tick,
    then: { status: "running", steps: { a: "running" }, history: [], effects: [], changed: false },
  },
  {
    name: "counts equal progress written with its keys in another order as no change",
    plan: STALLING,
    given: [claimed("a"), heartbeat("a", 1, progress({ x: 1, y: 2 })), wait(900), heartbeat("a", 1, progress({ y: 2, x: 1 })), wait(900), heartbeat("a", 1, progress({ x: 1, y: 2 })), wait(200)],
    when: tick,
    then: { status: "running", steps: { a: "retrying" }, history: ["step_stalled a#1", "step_retry_scheduled a#1"], effects: [] },
  },
];

const escalationRows: TransitionCase[] = [
  {
    name: "escalates with a deadline: needs_attention until afterMs, the next deadline of the alarm",
    plan: escalating("compensate"),
    given: [claimed("a"), succeeded("a"), claimed("b")],
    when: failedPermanently("b"),
    then: {
      status: "needs_attention",
      steps: { a: "succeeded", b: "failed" },
      history: ["step_failed b#1", "workflow_escalated b"],
      effects: [],
      check: (result, _before, now) => {
        expect(result.state.attentionDeadline).toBe(now + 10_000);
        expect(nextDeadline(result.state)).toEqual({ at: now + 10_000, reason: "attention_deadline" });
      },
    },
  },
  {
    name: "runs `compensate` when no operator acted by the deadline",
    plan: escalating("compensate"),
    given: EXPIRED_AFTER_B_FAILED,
    when: tick,
    then: {
      status: "compensating",
      steps: { a: "compensating", b: "failed" },
      history: ["escalation_expired b", "compensation_started", "step_scheduled a#2"],
      effects: ["enqueue a#2 compensation"],
      check: (result) => {
        expect(result.history[0]?.data).toEqual({ then: "compensate", deadlineAt: T0 + 10_000, overdueMs: 0 });
        expect(result.state.attentionDeadline).toBeUndefined();
      },
    },
  },
  {
    name: "runs `fail` when no operator acted by the deadline",
    plan: escalating("fail"),
    given: EXPIRED_AFTER_B_FAILED,
    when: tick,
    then: { status: "failed", steps: { a: "succeeded", b: "failed" }, history: ["escalation_expired b", "workflow_failed"], effects: [] },
  },
  {
    name: "runs `skip` when no operator acted by the deadline: the failed step counts as done and the workflow completes",
    plan: escalating("skip"),
    given: EXPIRED_AFTER_B_FAILED,
    when: tick,
    then: { status: "completed", steps: { a: "succeeded", b: "skipped" }, history: ["escalation_expired b", "workflow_completed"], effects: [] },
  },
  {
    name: "runs `retry` when no operator acted by the deadline: a fresh attempt budget",
    plan: escalating("retry"),
    given: EXPIRED_AFTER_B_FAILED,
    when: tick,
    then: {
      status: "running",
      steps: { a: "succeeded", b: "scheduled" },
      history: ["escalation_expired b", "step_scheduled b#2"],
      effects: ["enqueue b#2 action"],
      check: (result) => expect(stepOf(result.state, "b").budgetUsed).toBe(1),
    },
  },
  {
    name: "does nothing before the deadline",
    plan: escalating("fail"),
    given: [...EXPIRED_AFTER_B_FAILED.slice(0, -1), wait(9_999)],
    when: tick,
    then: { status: "needs_attention", history: [], effects: [], changed: false },
  },
  {
    name: "stops the clock when an operator acts first",
    plan: escalating("fail"),
    given: [...EXPIRED_AFTER_B_FAILED.slice(0, -1), wait(5_000)],
    when: compensationRequested(),
    then: {
      status: "compensating",
      history: ["operator_action", "compensation_started", "step_scheduled a#2"],
      effects: ["enqueue a#2 compensation"],
      check: (result) => expect(result.state.attentionDeadline).toBeUndefined(),
    },
  },
  {
    name: "gives a compensation that fails for good the same deadline: `skip` then skips that compensation",
    plan: plan([undoable("a"), step("b")], { onFailure: { escalate: { afterMs: 10_000, then: "skip" } } }),
    given: [claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b"), compensationRequested(), claimed("a", 2), failedPermanently("a", 2), wait(10_000)],
    when: tick,
    then: { status: "compensated", steps: { a: "skipped", b: "failed" }, history: ["escalation_expired a", "workflow_compensated"], effects: [] },
  },
];

describe("progress stall (timeouts.progressMs)", () => {
  for (const row of stallRows) it(row.name, () => expectTransition(row));
});

describe("escalation with a deadline (onFailure.escalate.afterMs)", () => {
  for (const row of escalationRows) it(row.name, () => expectTransition(row));

  it("escalates for ever with the plain word: no deadline", () => {
    const run = new Run(plan([step("a")], { onFailure: "escalate" })).play([claimed("a"), failedPermanently("a")]);
    expect(run.state.status).toBe("needs_attention");
    expect(run.state.attentionDeadline).toBeUndefined();
    expect(nextDeadline(run.state)).toBeUndefined();
  });
});

describe("verify before retry", () => {
  const VERIFIED = plan([step("charge", { verify: { type: "http", url: "https://remote.example/charges/{{ workflow.id }}", method: "GET" } })]);

  it("asks the claim of an attempt after one that timed out to verify first, rendered, and only then", () => {
    const run = new Run(VERIFIED, { id: "wf-verify" }).play([claimed("charge"), wait(1_000), tick, wait(200), tick]);
    expect(stepOf(run.state, "charge").attempts[0]?.status).toBe("timed_out");
    const claim = run.send(claimed("charge", 2));
    expect(claim.reply).toMatchObject({ ok: true, task: { verify: { url: "https://remote.example/charges/wf-verify", method: "GET" } } });
  });

  it("does not verify after an attempt the remote answered (a 503 is an answer), nor on a first attempt", () => {
    const run = new Run(VERIFIED);
    const first = run.send(claimed("charge"));
    expect(first.reply).toMatchObject({ ok: true });
    expect((first.reply as { task: object }).task).not.toHaveProperty("verify");
    run.play([failed("charge"), wait(200), tick]);
    expect((run.send(claimed("charge", 2)).reply as { task: object }).task).not.toHaveProperty("verify");
  });

  it("verifies after a request that broke off (a retryable failure with no HTTP status)", () => {
    const run = new Run(VERIFIED).play([claimed("charge"), failed("charge", 1, { error: { message: "network error", status: undefined } }), wait(200), tick]);
    expect((run.send(claimed("charge", 2)).reply as { task: object }).task).toHaveProperty("verify");
  });

  it("completes the step on a verified report: step_verified, then step_succeeded with the remote's answer, no retry", () => {
    const run = new Run(VERIFIED).play([claimed("charge"), wait(1_000), tick, wait(200), tick, claimed("charge", 2)]);
    const result = run.send({ type: "AttemptVerified", stepId: "charge", attempt: 2, output: { id: "ch_1" }, status: 200 });
    expect(result.history.map((entry) => entry.type)).toEqual(["step_verified", "step_succeeded", "workflow_completed"]);
    expect(result.history[0]?.data).toEqual({ status: 200 });
    expect(result.state.output).toEqual({ charge: { id: "ch_1" } });
    expect(result.effects).toEqual([]);
  });
});
