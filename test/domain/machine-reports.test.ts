import { describe, expect, it } from "vitest";
import { transition, type WorkflowEvent } from "../../src/domain/machine";
import {
  accepted,
  cancelRequested,
  claimed,
  deadLettered,
  deadlinesReached,
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
  succeeded,
  T0,
  undoable,
  wait,
  type Script,
  type TransitionCase,
} from "./builders";

const heartbeatRows: TransitionCase[] = [
  {
    name: "a heartbeat records when the agent was last heard from and its progress",
    plan: plan([step("a")]),
    given: [claimed("a"), wait(300)],
    when: heartbeat("a", 1, { value: { page: 2 } }),
    then: {
      status: "running",
      steps: { a: "running" },
      history: [],
      effects: [],
      changed: true,
      reply: { ok: true, cancelRequested: false },
      check: (result) => {
        const a = stepOf(result.state, "a");
        expect(a.lastHeartbeatAt).toBe(T0 + 300);
        expect(a.attempts[0]?.lastHeartbeatAt).toBe(T0 + 300);
        expect(a.progress).toEqual({ page: 2 });
      },
    },
  },
  {
    name: "a heartbeat without progress keeps the progress already recorded",
    plan: plan([step("a")]),
    given: [claimed("a"), heartbeat("a", 1, { value: { page: 2 } }), wait(300)],
    when: heartbeat("a", 1),
    then: {
      status: "running",
      history: [],
      effects: [],
      reply: { ok: true, cancelRequested: false },
      check: (result) => {
        expect(stepOf(result.state, "a").progress).toEqual({ page: 2 });
        expect(stepOf(result.state, "a").lastHeartbeatAt).toBe(T0 + 300);
      },
    },
  },
  {
    name: "progress from a failed attempt is handed to the next attempt when it is claimed",
    plan: plan([step("a")]),
    given: [claimed("a"), heartbeat("a", 1, { value: { page: 3 } }), failed("a", 1), wait(100), deadlinesReached()],
    when: claimed("a", 2),
    then: {
      status: "running",
      steps: { a: "running" },
      history: ["step_started a#2"],
      effects: [],
      reply: { ok: true, task: { attempt: 2, progress: { page: 3 } } },
    },
  },
  {
    name: "an attempt fenced by a cancel is told that cancel was requested",
    plan: plan([step("a")]),
    given: [claimed("a"), cancelRequested()],
    when: heartbeat("a", 1),
    then: { status: "cancelled", history: [], effects: [], changed: false, reply: { ok: true, cancelRequested: true } },
  },
  {
    name: "an attempt fenced by a cancel is told that cancel was requested while its step is being compensated",
    plan: plan([undoable("a")]),
    given: [claimed("a"), cancelRequested()],
    when: heartbeat("a", 1),
    then: { status: "compensating", history: [], effects: [], changed: false, reply: { ok: true, cancelRequested: true } },
  },
];

/** A message dead-lettered this often is poison; before that, our own trouble (see MAX_REDISPATCHES). */
const deadLetterRows: TransitionCase[] = [
  {
    name: "sends an unclaimed attempt's dead-lettered message again: same attempt, no attempt used",
    plan: plan([step("a")]),
    given: [wait(100)],
    when: deadLettered("a", 1),
    then: {
      status: "running",
      steps: { a: "scheduled" },
      history: ["task_dead_lettered a#1"],
      effects: ["enqueue a#1 action"],
      reply: { ok: true },
      check: (result) => {
        const a = stepOf(result.state, "a");
        expect(a).toMatchObject({ attempt: 1, budgetUsed: 1 });
        expect(a.attempts).toEqual([expect.objectContaining({ n: 1, status: "scheduled", resends: 1, deadLetters: 1, sentAt: T0 + 100 })]);
        expect(result.history[0]?.data).toEqual({ outcome: "re-dispatched", deadLetters: 1 });
      },
    },
  },
  {
    name: "fails the attempt as retryable when its message dead-letters a third time (poison), and schedules the retry",
    plan: plan([step("a")]),
    given: [deadLettered("a", 1), deadLettered("a", 1)],
    when: deadLettered("a", 1),
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["task_dead_lettered a#1", "step_failed a#1", "step_retry_scheduled a#1"],
      effects: [],
      check: (result) => {
        expect(stepOf(result.state, "a").attempts[0]).toMatchObject({ status: "failed", error: { retryable: true, message: expect.stringMatching(/dead-lettered the task message 3 times/) } });
      },
    },
  },
  {
    name: "only notes a dead letter for an attempt an agent already claimed",
    plan: plan([step("a")]),
    given: [claimed("a")],
    when: deadLettered("a", 1),
    then: { status: "running", steps: { a: "running" }, history: ["task_dead_lettered a#1"], effects: [], changed: false, reply: { ok: true } },
  },
];

describe("dead letters", () => {
  it.each(deadLetterRows)("$name", (row) => expectTransition(row));
});

describe("heartbeats", () => {
  it.each(heartbeatRows)("$name", (row) => expectTransition(row));
});

const reportRows: TransitionCase[] = [
  {
    name: "a 202 from the remote leaves the step waiting for the remote to report",
    plan: plan([step("a"), step("b")]),
    given: [claimed("a"), wait(200)],
    when: accepted("a", 1),
    then: {
      status: "running",
      steps: { a: "waiting", b: "pending" },
      history: ["step_waiting a#1"],
      effects: [],
      reply: { ok: true },
      check: (result) => {
        const a = stepOf(result.state, "a");
        expect(a.attempts[0]).toMatchObject({ status: "waiting", lastHeartbeatAt: T0 + 200 });
        expect(a.lastHeartbeatAt).toBe(T0 + 200);
      },
    },
  },
  {
    name: "a waiting step succeeds when the remote completes through its task token",
    plan: plan([step("a"), step("b")]),
    given: [claimed("a"), accepted("a")],
    when: succeeded("a", 1, { done: true }),
    then: {
      status: "running",
      steps: { a: "succeeded", b: "scheduled" },
      history: ["step_succeeded a#1", "step_scheduled b#1"],
      effects: ["enqueue b#1 action"],
    },
  },
  {
    name: "a transient failure schedules a retry after the first backoff interval",
    plan: plan([step("a")]),
    given: [claimed("a"), wait(50)],
    when: failed("a", 1),
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["step_failed a#1", "step_retry_scheduled a#1"],
      effects: [],
      reply: { ok: true },
      check: (result, _before, now) => {
        const a = stepOf(result.state, "a");
        expect(a.nextRetryAt).toBe(now + 100);
        expect(a.error).toEqual({ message: "HTTP 503", retryable: true, status: 503 });
        expect(a.attempts[0]).toMatchObject({ status: "failed", endedAt: now, error: { status: 503 } });
        expect(result.history[0]?.data).toMatchObject({ final: false });
        expect(result.history[1]?.data).toEqual({ kind: "action", delayMs: 100, nextRetryAt: now + 100 });
      },
    },
  },
  {
    name: "a failure that does not say whether it is retryable is retried",
    plan: plan([step("a")]),
    given: [claimed("a")],
    when: { type: "AttemptFailed", stepId: "a", attempt: 1, error: { message: "connection reset" } },
    then: { status: "running", steps: { a: "retrying" }, history: ["step_failed a#1", "step_retry_scheduled a#1"], effects: [] },
  },
  {
    name: "each further transient failure doubles the backoff",
    plan: plan([step("a")]),
    given: [claimed("a"), failed("a", 1), wait(100), deadlinesReached(), claimed("a", 2)],
    when: failed("a", 2),
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["step_failed a#2", "step_retry_scheduled a#2"],
      effects: [],
      check: (result, _before, now) => expect(stepOf(result.state, "a").nextRetryAt).toBe(now + 200),
    },
  },
  {
    name: "a Retry-After longer than the backoff is honoured",
    plan: plan([step("a")]),
    given: [claimed("a")],
    when: failed("a", 1, { error: { status: 429 }, retryAfterMs: 700 }),
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["step_failed a#1", "step_retry_scheduled a#1"],
      effects: [],
      check: (result, _before, now) => expect(stepOf(result.state, "a").nextRetryAt).toBe(now + 700),
    },
  },
  {
    name: "a Retry-After beyond maxIntervalMs is capped at maxIntervalMs",
    plan: plan([step("a")]),
    given: [claimed("a")],
    when: failed("a", 1, { error: { status: 429 }, retryAfterMs: 3_600_000 }),
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["step_failed a#1", "step_retry_scheduled a#1"],
      effects: [],
      check: (result, _before, now) => expect(stepOf(result.state, "a").nextRetryAt).toBe(now + 1_000),
    },
  },
  {
    name: "a permanent failure under onFailure compensate unwinds the steps that succeeded",
    plan: plan([undoable("a"), step("b")]),
    given: [claimed("a"), succeeded("a"), claimed("b")],
    when: failedPermanently("b", 1, "card declined"),
    then: {
      status: "compensating",
      steps: { a: "compensating", b: "failed" },
      history: ["step_failed b#1", "compensation_started", "step_scheduled a#2"],
      effects: ["enqueue a#2 compensation"],
      check: (result) => {
        expect(result.state.error).toEqual({ message: 'step "b" failed: card declined' });
        expect(stepOf(result.state, "b").nextRetryAt).toBeUndefined();
        expect(result.history[0]?.data).toMatchObject({ final: true });
      },
    },
  },
  {
    name: "a permanent failure under onFailure escalate waits for an operator",
    plan: plan([undoable("a"), step("b")], { onFailure: "escalate" }),
    given: [claimed("a"), succeeded("a"), claimed("b")],
    when: failedPermanently("b"),
    then: {
      status: "needs_attention",
      steps: { a: "succeeded", b: "failed" },
      history: ["step_failed b#1", "workflow_escalated b"],
      effects: [],
    },
  },
  {
    name: "a permanent failure under onFailure fail ends the workflow failed",
    plan: plan([undoable("a"), step("b"), step("c")], { onFailure: "fail" }),
    given: [claimed("a"), succeeded("a"), claimed("b"), wait(70)],
    when: failedPermanently("b", 1, "card declined"),
    then: {
      status: "failed",
      steps: { a: "succeeded", b: "failed", c: "cancelled" },
      history: ["step_failed b#1", "workflow_failed"],
      effects: [],
      check: (result) => {
        expect(result.state.endedAt).toBe(T0 + 70);
        expect(result.state.error).toEqual({ message: 'step "b" failed: card declined' });
      },
    },
  },
  {
    name: "a transient failure of the last allowed attempt fails the step for good",
    plan: plan([step("a", { retry: { maxAttempts: 2 } })], { onFailure: "fail" }),
    given: [claimed("a"), failed("a", 1), wait(100), deadlinesReached(), claimed("a", 2)],
    when: failed("a", 2),
    then: {
      status: "failed",
      steps: { a: "failed" },
      history: ["step_failed a#2", "workflow_failed"],
      effects: [],
      check: (result) => {
        expect(result.history[0]?.data).toMatchObject({ final: true });
        expect(stepOf(result.state, "a").attempts.map((attempt) => attempt.status)).toEqual(["failed", "failed"]);
      },
    },
  },
];

describe("reports from agents and remotes", () => {
  it.each(reportRows)("$name", (row) => expectTransition(row));
});

/** Attempt 1 failed and attempt 2 is now running: anything attempt 1 says is stale. */
const RETRIED: Script = [claimed("a"), failed("a", 1), wait(100), deadlinesReached(), claimed("a", 2)];

const staleRows: { name: string; event: WorkflowEvent; report: string }[] = [
  { name: "a success", event: succeeded("a", 1), report: "complete" },
  { name: "a failure", event: failed("a", 1), report: "fail" },
  { name: "a 202", event: accepted("a", 1), report: "accepted" },
  { name: "a heartbeat", event: heartbeat("a", 1), report: "heartbeat" },
  { name: "a claim", event: claimed("a", 1), report: "claim" },
];

describe("stale and late reports", () => {
  it.each(staleRows)("refuses $name from an older attempt as stale and records the rejection", ({ event, report }) =>
    expectTransition({
      name: "stale",
      plan: plan([step("a")]),
      given: RETRIED,
      when: event,
      then: {
        status: "running",
        steps: { a: "running" },
        history: ["stale_report_rejected a#1"],
        effects: [],
        reply: { ok: false, code: "stale_attempt" },
        check: (result) => expect(result.history[0]?.data).toEqual({ report, currentAttempt: 2 }),
      },
    }),
  );

  it("rejects a stale report without changing the state, so its version stays the same", () => {
    const run = new Run(plan([step("a")])).play(RETRIED).wait(10);
    const before = run.state;

    const result = transition(before, succeeded("a", 1), run.now, fixedRandom);

    expect(describeHistory(result.history)).toEqual(["stale_report_rejected a#1"]);
    expect(result.changed).toBe(false);
    expect(result.state.version).toBe(before.version);
    expect(result.state).toEqual(before);
  });

  const lateRows: TransitionCase[] = [
    {
      name: "a success that arrives after the supervisor timed the attempt out is stale",
      plan: plan([step("a")]),
      given: [claimed("a"), wait(1_000), deadlinesReached()],
      when: succeeded("a", 1),
      then: { status: "running", steps: { a: "retrying" }, history: ["stale_report_rejected a#1"], effects: [], reply: { ok: false, code: "stale_attempt" } },
    },
    {
      name: "a repeated success for a step that has succeeded is gone",
      plan: plan([step("a"), step("b")]),
      given: [claimed("a"), succeeded("a")],
      when: succeeded("a", 1),
      then: { status: "running", steps: { a: "succeeded" }, history: [], effects: [], changed: false, reply: { ok: false, code: "gone" } },
    },
    {
      name: "a heartbeat for a step that has succeeded is gone",
      plan: plan([step("a"), step("b")]),
      given: [claimed("a"), succeeded("a")],
      when: heartbeat("a", 1),
      then: { status: "running", history: [], effects: [], changed: false, reply: { ok: false, code: "gone" } },
    },
    {
      name: "a report for a step that failed for good is gone",
      plan: plan([step("a")], { onFailure: "escalate" }),
      given: [claimed("a"), failedPermanently("a")],
      when: succeeded("a", 1),
      then: { status: "needs_attention", steps: { a: "failed" }, history: [], effects: [], changed: false, reply: { ok: false, code: "gone" } },
    },
    {
      name: "a success from an attempt fenced by a cancel is gone and does not count",
      plan: plan([undoable("a"), step("b")]),
      given: [claimed("a"), succeeded("a"), claimed("b"), cancelRequested()],
      when: succeeded("b", 1),
      then: {
        status: "compensating",
        steps: { a: "compensating", b: "cancelled" },
        history: [],
        effects: [],
        changed: false,
        reply: { ok: false, code: "gone" },
      },
    },
    {
      name: "a success from an older attempt of a step that has since succeeded is gone, not stale",
      plan: plan([step("a"), step("b")]),
      given: [claimed("a"), failed("a", 1), wait(100), deadlinesReached(), claimed("a", 2), succeeded("a", 2)],
      when: succeeded("a", 1),
      then: { status: "running", steps: { a: "succeeded" }, history: [], effects: [], changed: false, reply: { ok: false, code: "gone" } },
    },
    {
      name: "a heartbeat for an attempt no agent has claimed changes nothing and leaves the claim possible",
      plan: plan([step("a")]),
      when: heartbeat("a", 1, { value: { early: true } }),
      then: { status: "running", steps: { a: "scheduled" }, history: [], effects: [], changed: false, reply: { ok: true, cancelRequested: false } },
    },
    {
      name: "a repeated 202 for a waiting attempt changes nothing",
      plan: plan([step("a")]),
      given: [claimed("a"), accepted("a", 1)],
      when: accepted("a", 1),
      then: { status: "running", steps: { a: "waiting" }, history: [], effects: [], changed: false, reply: { ok: true } },
    },
    {
      name: "a report for a step the workflow does not have is not found",
      plan: plan([step("a")]),
      when: succeeded("zzz", 1),
      then: { status: "running", history: [], effects: [], changed: false, reply: { ok: false, code: "not_found" } },
    },
  ];

  it.each(lateRows)("$name", (row) => expectTransition(row));
});
