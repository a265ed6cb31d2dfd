import { describe, expect, it } from "vitest";
import type { WorkflowPlan } from "../../src/domain/language/plan";
import { nextDeadlineAt, startWorkflow } from "../../src/domain/machine";
import { QUEUE_CHECK_JITTER, QUEUE_CHECK_MS } from "../../src/domain/machine/queue-check";
import {
  accepted,
  claimed,
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
  type Script,
  type TransitionCase,
} from "./builders";

const tick = deadlinesReached();

/** The contract's default: no schedule-to-start, so a queued attempt is only checked for a lost message. */
const NO_QUEUE_TIMEOUT = plan([step("a")], { defaults: { timeouts: { startToCloseMs: 5_000, heartbeatMs: 1_000 } } });

/** A step whose attempt may run 2.5 s, so heartbeats every 0.9 s outlive its start-to-close deadline. */
const shortStep = step("a", { timeouts: { startToCloseMs: 2_500 } });

const rows: TransitionCase[] = [
  {
    name: "times out an attempt no agent claimed within scheduleToStartMs and retries it",
    plan: plan([step("a")]),
    given: [wait(500)],
    when: tick,
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["step_timed_out a#1", "step_retry_scheduled a#1"],
      effects: [],
      check: (result) => {
        const a = stepOf(result.state, "a");
        expect(a.attempts[0]).toMatchObject({
          status: "timed_out",
          endedAt: T0 + 500,
          error: { message: "attempt exceeded scheduleToStartMs", retryable: true, timeout: "schedule_to_start" },
        });
        expect(a.nextRetryAt).toBe(T0 + 600);
        expect(result.history[0]?.data).toEqual({ timeout: "schedule_to_start", deadlineAt: T0 + 500, overdueMs: 0 });
      },
    },
  },
  {
    name: "only checks on an attempt waiting in our queue when its step sets no scheduleToStartMs (the default): still queued behind older messages, it is left alone",
    plan: NO_QUEUE_TIMEOUT,
    given: [wait(10 * 60_000)],
    when: { type: "DeadlinesReached", queueLag: { lagMs: 10 * 60_000, at: T0 + 10 * 60_000 } },
    then: {
      status: "running",
      steps: { a: "scheduled" },
      history: [],
      effects: [],
      changed: true,
      check: (result) => {
        expect(stepOf(result.state, "a").attempts).toEqual([expect.objectContaining({ n: 1, status: "scheduled", queueCheckAt: T0 + 10 * 60_000 + QUEUE_CHECK_MS })]);
        expect(nextDeadlineAt(result.state)).toBe(T0 + 10 * 60_000 + QUEUE_CHECK_MS);
      },
    },
  },
  {
    name: "sends a queued attempt's message again, same attempt and no attempt used, when younger messages are being delivered: the queue lost it",
    plan: NO_QUEUE_TIMEOUT,
    given: [wait(QUEUE_CHECK_MS)],
    when: { type: "DeadlinesReached", queueLag: { lagMs: 5_000, at: T0 + QUEUE_CHECK_MS - 1_000 } },
    then: {
      status: "running",
      steps: { a: "scheduled" },
      history: ["task_resent a#1"],
      effects: ["enqueue a#1 action"],
      check: (result) => {
        const a = stepOf(result.state, "a");
        expect(a).toMatchObject({ attempt: 1, budgetUsed: 1 });
        expect(a.attempts[0]).toMatchObject({ n: 1, status: "scheduled", resends: 1, sentAt: T0 + QUEUE_CHECK_MS });
        expect(result.history[0]?.data).toEqual({ reason: "younger messages were delivered", waitedMs: QUEUE_CHECK_MS, queueLagMs: 5_000 });
        // The next check backs off: about two minutes (1 min doubled, 20 % jitter, here none).
        expect(nextDeadlineAt(result.state)).toBe(T0 + QUEUE_CHECK_MS + 2 * QUEUE_CHECK_MS);
      },
    },
  },
  {
    name: "sends a queued attempt's message again when nothing is being delivered (no fresh lag: the queue is empty)",
    plan: NO_QUEUE_TIMEOUT,
    given: [wait(QUEUE_CHECK_MS)],
    when: { type: "DeadlinesReached", queueLag: { lagMs: 10 * 60_000, at: T0 } },
    then: { status: "running", steps: { a: "scheduled" }, history: ["task_resent a#1"], effects: ["enqueue a#1 action"] },
  },
  {
    name: "does not check a queued attempt before QUEUE_CHECK_MS",
    plan: NO_QUEUE_TIMEOUT,
    given: [wait(QUEUE_CHECK_MS - 1)],
    when: tick,
    then: { status: "running", steps: { a: "scheduled" }, history: [], effects: [], changed: false },
  },
  {
    name: "leaves a queued attempt alone until its schedule-to-start deadline",
    plan: plan([step("a")]),
    given: [wait(499)],
    when: tick,
    then: { status: "running", steps: { a: "scheduled" }, history: [], effects: [], changed: false },
  },
  {
    name: "times out an attempt that runs past startToCloseMs even though it keeps heartbeating",
    plan: plan([shortStep]),
    given: [claimed("a"), wait(900), heartbeat("a"), wait(900), heartbeat("a"), wait(700)],
    when: tick,
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["step_timed_out a#1", "step_retry_scheduled a#1"],
      effects: [],
      check: (result) => {
        expect(stepOf(result.state, "a").attempts[0]?.error).toMatchObject({ message: "attempt exceeded startToCloseMs", timeout: "start_to_close" });
        expect(result.history[0]?.data).toMatchObject({ timeout: "start_to_close", deadlineAt: T0 + 2_500 });
      },
    },
  },
  {
    name: "retries a step whose agent stopped heartbeating",
    plan: plan([step("a")]),
    given: [claimed("a"), wait(1_050)],
    when: tick,
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["step_heartbeat_missed a#1", "step_retry_scheduled a#1"],
      effects: [],
      check: (result) => {
        expect(stepOf(result.state, "a").attempts[0]).toMatchObject({
          status: "timed_out",
          error: { message: "no heartbeat within heartbeatMs", retryable: true, timeout: "heartbeat" },
        });
        expect(result.history[0]?.data).toEqual({ timeout: "heartbeat", deadlineAt: T0 + 1_000, overdueMs: 50 });
        expect(stepOf(result.state, "a").nextRetryAt).toBe(T0 + 1_050 + 100);
      },
    },
  },
  {
    name: "keeps a running attempt alive while its heartbeats arrive in time",
    plan: plan([step("a")]),
    given: [claimed("a"), wait(600), heartbeat("a"), wait(900)],
    when: tick,
    then: { status: "running", steps: { a: "running" }, history: [], effects: [], changed: false },
  },
  {
    name: "retries a step whose remote accepted the work and then went silent",
    plan: plan([step("a")]),
    given: [claimed("a"), wait(200), accepted("a"), wait(1_000)],
    when: tick,
    then: {
      status: "running",
      steps: { a: "retrying" },
      history: ["step_heartbeat_missed a#1", "step_retry_scheduled a#1"],
      effects: [],
      check: (result) => expect(result.history[0]?.data).toMatchObject({ deadlineAt: T0 + 1_200 }),
    },
  },
  {
    name: "starts a new attempt with a higher number once the backoff has passed",
    plan: plan([step("a")]),
    given: [claimed("a"), failed("a", 1), wait(100)],
    when: tick,
    then: {
      status: "running",
      steps: { a: "scheduled" },
      history: ["step_scheduled a#2"],
      effects: ["enqueue a#2 action"],
      check: (result) => {
        const a = stepOf(result.state, "a");
        expect(a.attempt).toBe(2);
        expect(a.nextRetryAt).toBeUndefined();
        expect(a.attempts[1]).toEqual({ n: 2, kind: "action", status: "scheduled", scheduledAt: T0 + 100, queueCheckAt: T0 + 100 + QUEUE_CHECK_MS });
      },
    },
  },
  {
    name: "waits out the backoff before starting the retry",
    plan: plan([step("a")]),
    given: [claimed("a"), failed("a", 1), wait(99)],
    when: tick,
    then: { status: "running", steps: { a: "retrying" }, history: [], effects: [], changed: false },
  },
  {
    name: "does nothing when run a second time for the same deadline",
    plan: plan([step("a")]),
    given: [claimed("a"), failed("a", 1), wait(100), tick],
    when: tick,
    then: { status: "running", steps: { a: "scheduled" }, history: [], effects: [], changed: false },
  },
  {
    name: "applies onFailure when the attempt that timed out was the last one allowed",
    plan: plan([step("a", { retry: { maxAttempts: 1 } })], { onFailure: "fail" }),
    given: [claimed("a"), wait(1_000)],
    when: tick,
    then: {
      status: "failed",
      steps: { a: "failed" },
      history: ["step_heartbeat_missed a#1", "step_failed a#1", "workflow_failed"],
      effects: [],
    },
  },
  {
    name: "compensates a workflow that ran past its timeoutMs under onFailure compensate",
    plan: plan([undoable("a"), step("b")], { timeoutMs: 800 }),
    given: [claimed("a"), succeeded("a"), claimed("b"), wait(800)],
    when: tick,
    then: {
      status: "compensating",
      steps: { a: "compensating", b: "cancelled" },
      history: ["workflow_timed_out", "compensation_started", "step_scheduled a#2"],
      effects: ["enqueue a#2 compensation"],
      check: (result) => expect(result.state.error).toEqual({ message: "workflow exceeded timeoutMs (800 ms)", timeout: "workflow_timeout" }),
    },
  },
  {
    name: "fails a workflow that ran past its timeoutMs under onFailure fail",
    plan: plan([undoable("a"), step("b")], { timeoutMs: 800, onFailure: "fail" }),
    given: [claimed("a"), succeeded("a"), claimed("b"), wait(800)],
    when: tick,
    then: {
      status: "failed",
      steps: { a: "succeeded", b: "cancelled" },
      history: ["workflow_timed_out", "workflow_failed"],
      effects: [],
      check: (result) => expect(result.state.endedAt).toBe(T0 + 800),
    },
  },
  {
    name: "fails a workflow that ran past its timeoutMs under onFailure escalate, since nobody can fix a deadline",
    plan: plan([step("a")], { timeoutMs: 800, onFailure: "escalate" }),
    given: [claimed("a"), wait(800)],
    when: tick,
    then: { status: "failed", steps: { a: "cancelled" }, history: ["workflow_timed_out", "workflow_failed"], effects: [] },
  },
  {
    name: "changes nothing when nothing is due",
    plan: plan([step("a")], { timeoutMs: 10_000 }),
    given: [claimed("a"), wait(10)],
    when: tick,
    then: { status: "running", steps: { a: "running" }, history: [], effects: [], changed: false },
  },
  {
    name: "changes nothing once the workflow has ended, however late",
    plan: plan([step("a")], { timeoutMs: 10_000 }),
    given: [claimed("a"), succeeded("a"), wait(60_000)],
    when: tick,
    then: { status: "completed", history: [], effects: [], changed: false },
  },
];

describe("the supervisor's tick", () => {
  it.each(rows)("$name", (row) => expectTransition(row));
});

const deadlineRows: { name: string; plan: WorkflowPlan; given: Script; expected: number | undefined }[] = [
  { name: "a queued attempt's schedule-to-start deadline", plan: plan([step("a")]), given: [], expected: T0 + 500 },
  { name: "a running attempt's next heartbeat deadline", plan: plan([step("a")]), given: [wait(100), claimed("a")], expected: T0 + 1_100 },
  {
    name: "a running attempt's start-to-close deadline when it comes before the next heartbeat is due",
    plan: plan([shortStep]),
    given: [claimed("a"), wait(1_800), heartbeat("a")],
    expected: T0 + 2_500,
  },
  { name: "a backing-off step's retry time", plan: plan([step("a")]), given: [claimed("a"), wait(50), failed("a")], expected: T0 + 150 },
  { name: "the workflow deadline when it comes first", plan: plan([step("a")], { timeoutMs: 300 }), given: [], expected: T0 + 300 },
  {
    name: "the earliest deadline across parallel steps",
    plan: plan([step("a", { dependsOn: [] }), step("b", { dependsOn: [] })]),
    given: [claimed("a")],
    expected: T0 + 500,
  },
  {
    name: "the compensation's deadline, not the workflow deadline, once compensation has begun",
    plan: plan([undoable("a"), step("b")], { timeoutMs: 200 }),
    given: [claimed("a"), succeeded("a"), claimed("b"), wait(100), failedPermanently("b")],
    expected: T0 + 600,
  },
  {
    name: "the workflow deadline of a workflow waiting on an operator",
    plan: plan([step("a")], { timeoutMs: 10_000, onFailure: "escalate" }),
    given: [claimed("a"), failedPermanently("a")],
    expected: T0 + 10_000,
  },
  { name: "nothing for a completed workflow", plan: plan([step("a")], { timeoutMs: 10_000 }), given: [claimed("a"), succeeded("a")], expected: undefined },
  {
    name: "nothing for a workflow waiting on an operator with nothing in flight",
    plan: plan([step("a")], { onFailure: "escalate" }),
    given: [claimed("a"), failedPermanently("a")],
    expected: undefined,
  },
  {
    name: "nothing for a workflow whose compensation failed, even with a workflow deadline",
    plan: plan([undoable("a", { retry: { maxAttempts: 1 } }), step("b")], { timeoutMs: 10_000 }),
    given: [claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b"), claimed("a", 2), failed("a", 2)],
    expected: undefined,
  },
];

describe("nextDeadlineAt", () => {
  it.each(deadlineRows)("is $name", ({ plan: workflowPlan, given, expected }) => {
    expect(nextDeadlineAt(new Run(workflowPlan).play(given).state)).toBe(expected);
  });

  it("points at exactly the moment the tick acts on", () => {
    const run = new Run(plan([step("a")])).play([claimed("a"), wait(300), heartbeat("a")]);
    const due = nextDeadlineAt(run.state) ?? 0;

    run.wait(due - run.now - 1);
    expect(run.send(tick).changed).toBe(false);
    run.wait(1);
    expect(run.send(tick).history.map((entry) => entry.type)).toContain("step_heartbeat_missed");
  });
});

describe("the first lost-message check of a queued attempt", () => {
  const start = (draw: number) =>
    startWorkflow({ tenant: "t", id: "wf", plan: NO_QUEUE_TIMEOUT, input: null, now: T0 }, () => draw).state.steps[0]?.attempts[0];

  // Attempts sent together and lost together (a local queue across a restart) must not all be sent again in
  // the same second: that herd of work would make every other workflow's alarm late.
  it.each([
    { draw: 0, expected: T0 + QUEUE_CHECK_MS * (1 - QUEUE_CHECK_JITTER) },
    { draw: 0.5, expected: T0 + QUEUE_CHECK_MS },
    { draw: 1, expected: T0 + QUEUE_CHECK_MS * (1 + QUEUE_CHECK_JITTER) },
  ])("is spread from half to one and a half QUEUE_CHECK_MS after the send (draw $draw)", ({ draw, expected }) => {
    expect(start(draw)).toMatchObject({ status: "scheduled", queueCheckAt: expected });
  });
});
