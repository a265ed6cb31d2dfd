// The workflow list's one line (machine/triage.ts): a table of states, each played from its start, and the line,
// step, attempts and deadline the list shows for it; none while a workflow is simply running.
import { describe, expect, it } from "vitest";
import type { WorkflowPlan } from "../../src/domain/language/plan";
import { causeOf, progressWords, triageOf, type Triage } from "../../src/domain/machine/triage";
import {
  claimed,
  deadlinesReached,
  failed,
  failedPermanently,
  heartbeat,
  pauseRequested,
  plan,
  retryRequested,
  Run,
  sleepStep,
  step,
  succeeded,
  T0,
  TEST_RETRY,
  undoable,
  wait,
  waitStep,
  workerAction,
  type Script,
} from "./builders";

interface TriageRow {
  name: string;
  plan: WorkflowPlan;
  startAt?: number;
  given: Script;
  triage: Triage | undefined;
}

const oneStep = plan([step("notify")]);
const escalating = plan([step("charge")], { onFailure: "escalate" });
const stalling = plan([step("render", { timeouts: { startToCloseMs: 30_000, heartbeatMs: 1_000, progressMs: 2_000 } })], {
  onFailure: "escalate",
  defaults: { retry: { ...TEST_RETRY, maxAttempts: 1 } },
});
const approval = plan([waitStep("approve", { event: "approved", timeoutMs: 60_000 })]);
/** A worker step with no scheduleToStartMs: a task may wait in its pool for as long as it takes. */
const pooled = (fields: Parameters<typeof workerAction>[1] = {}) =>
  plan([step("encode", { action: workerAction("gpu", fields) })], { defaults: { retry: TEST_RETRY, timeouts: { startToCloseMs: 5_000, heartbeatMs: 1_000 } } });
const percent = (value: number) => ({ value: { jobId: "job_1", percent: value } });
const parked = { type: "AttemptParked" as const, stepId: "notify", attempt: 1, host: "remote.example", openUntil: T0 + 30_000 };
const deferred = { type: "DeadlinesReached" as const, startAdmission: { overloaded: true as const, lagMs: 15_000, retryAfterSeconds: 5 } };

const rows: TriageRow[] = [
  { name: "none while the first attempt waits in the queue", plan: oneStep, given: [], triage: undefined },
  { name: "none while the first attempt runs", plan: oneStep, given: [claimed("notify"), heartbeat("notify", 1, percent(47))], triage: undefined },
  {
    name: "a retry waiting out its backoff after a 503: the attempt to come of the budget, and when",
    plan: oneStep,
    given: [claimed("notify"), failed("notify")],
    triage: { summary: "retrying notify 2/3 after 503", stepId: "notify", attempts: { used: 2, max: 3 }, nextDeadlineAt: T0 + 100 },
  },
  {
    name: "the same line once that retry is queued (its deadline is the attempt's now)",
    plan: oneStep,
    given: [claimed("notify"), failed("notify"), wait(100), deadlinesReached()],
    triage: { summary: "retrying notify 2/3 after 503", stepId: "notify", attempts: { used: 2, max: 3 }, nextDeadlineAt: T0 + 600 },
  },
  {
    name: "the same line while that retry runs, whatever its heartbeats bring",
    plan: oneStep,
    given: [claimed("notify"), failed("notify"), wait(100), deadlinesReached(), claimed("notify", 2), heartbeat("notify", 2, percent(12))],
    triage: { summary: "retrying notify 2/3 after 503", stepId: "notify", attempts: { used: 2, max: 3 }, nextDeadlineAt: T0 + 1_100 },
  },
  {
    name: "the next retry counts on",
    plan: oneStep,
    given: [claimed("notify"), failed("notify"), wait(100), deadlinesReached(), claimed("notify", 2), failed("notify", 2, { error: { status: 502 } })],
    triage: { summary: "retrying notify 3/3 after 502", stepId: "notify", attempts: { used: 3, max: 3 }, nextDeadlineAt: T0 + 300 },
  },
  {
    name: "a retry after the heartbeats stopped",
    plan: oneStep,
    given: [claimed("notify"), heartbeat("notify", 1, percent(47)), wait(1_000), deadlinesReached()],
    triage: { summary: "retrying notify 2/3 after no heartbeat", stepId: "notify", attempts: { used: 2, max: 3 }, nextDeadlineAt: T0 + 1_100 },
  },
  {
    name: "a retry after an error with no status: its message",
    plan: oneStep,
    given: [claimed("notify"), failed("notify", 1, { error: { message: "connect ECONNREFUSED 10.0.0.1:443", status: undefined } })],
    triage: { summary: "retrying notify 2/3 after connect ECONNREFUSED 10.0.0.1:443", stepId: "notify", attempts: { used: 2, max: 3 }, nextDeadlineAt: T0 + 100 },
  },
  {
    name: "none once the retry succeeded",
    plan: plan([step("notify"), step("ship", { dependsOn: ["notify"] })]),
    given: [claimed("notify"), failed("notify"), wait(100), deadlinesReached(), claimed("notify", 2), succeeded("notify", 2)],
    triage: undefined,
  },
  {
    name: "a step that failed for good waits on an operator: what failed and why",
    plan: escalating,
    given: [claimed("charge"), failedPermanently("charge")],
    triage: { summary: "needs attention: charge failed (422)", stepId: "charge", attempts: { used: 1, max: 3 } },
  },
  {
    name: "a job that stalled at 47 % until its attempts ran out: the progress it stalled at",
    plan: stalling,
    given: [claimed("render"), wait(500), heartbeat("render", 1, percent(47)), wait(900), heartbeat("render", 1, percent(47)), wait(900), heartbeat("render", 1, percent(47)), wait(700), deadlinesReached()],
    triage: { summary: "needs attention: render failed (stalled at 47 %)", stepId: "render", attempts: { used: 1, max: 1 } },
  },
  {
    name: "a compensation that failed for good",
    plan: plan([undoable("charge"), step("ship", { dependsOn: ["charge"] })]),
    given: [claimed("charge"), succeeded("charge"), claimed("ship"), failedPermanently("ship"), claimed("charge", 2), failedPermanently("charge", 2, "HTTP 409")],
    triage: { summary: "needs attention: compensation of charge failed (422)", stepId: "charge", attempts: { used: 1, max: 3 } },
  },
  {
    name: "none for a compensation's first attempt, though the step's action had failed before it",
    plan: plan([undoable("charge", { dependsOn: [] }), step("ship", { dependsOn: ["charge"] })]),
    given: [claimed("charge"), succeeded("charge"), claimed("ship"), failedPermanently("ship")],
    triage: undefined,
  },
  {
    name: "none for an operator's retry of a failed step: a fresh budget",
    plan: escalating,
    given: [claimed("charge"), failedPermanently("charge"), retryRequested("charge")],
    triage: undefined,
  },
  {
    name: "a wait for an event: which, and when it gives up",
    plan: approval,
    given: [],
    triage: { summary: "waiting for event approved", stepId: "approve", nextDeadlineAt: T0 + 60_000 },
  },
  { name: "none for a sleep, which ends by itself", plan: plan([sleepStep("nap", { durationMs: 60_000 })]), given: [], triage: undefined },
  {
    name: "paused, before anything it holds",
    plan: oneStep,
    given: [claimed("notify"), failed("notify"), pauseRequested()],
    triage: { summary: "paused" },
  },
  {
    name: "a step parked while its host's breaker is open",
    plan: oneStep,
    given: [claimed("notify"), parked],
    triage: { summary: "circuit open for remote.example", stepId: "notify", nextDeadlineAt: T0 + 30_000 },
  },
  { name: "none for a worker task waiting for its first poll", plan: pooled(), given: [], triage: undefined },
  {
    name: "a worker task that no worker took in time, moved to its fallback pool (its last: no deadline)",
    plan: pooled({ fallback: { pools: ["cpu"], afterMs: 60_000 } }),
    given: [wait(60_000), deadlinesReached()],
    triage: { summary: "waiting for a worker in pool cpu", stepId: "encode" },
  },
  {
    name: "the move after that, with when it moves on",
    plan: pooled({ fallback: { pools: ["gpu-eu", "cpu"], afterMs: 60_000 } }),
    given: [wait(60_000), deadlinesReached()],
    triage: { summary: "waiting for a worker in pool gpu-eu", stepId: "encode", nextDeadlineAt: T0 + 120_000 },
  },
  { name: "none for a delayed start waiting for its time", plan: oneStep, startAt: T0 + 60_000, given: [], triage: undefined },
  {
    name: "a delayed start that back-pressure deferred",
    plan: oneStep,
    startAt: T0 + 60_000,
    given: [wait(60_000), deferred],
    triage: { summary: "start deferred: the task queue is behind", nextDeadlineAt: T0 + 65_000 },
  },
  {
    name: "of several, what needs a person comes before a retry, and a retry before a wait",
    plan: plan([step("notify"), waitStep("approve", { event: "approved", timeoutMs: 60_000 }, { dependsOn: [] }), step("charge", { dependsOn: [] })], { onFailure: "escalate" }),
    given: [claimed("notify"), failed("notify"), claimed("charge"), failedPermanently("charge")],
    triage: { summary: "needs attention: charge failed (422)", stepId: "charge", attempts: { used: 1, max: 3 } },
  },
  {
    name: "a retry comes before a wait",
    plan: plan([waitStep("approve", { event: "approved", timeoutMs: 60_000 }), step("notify", { dependsOn: [] })]),
    given: [claimed("notify"), failed("notify")],
    triage: { summary: "retrying notify 2/3 after 503", stepId: "notify", attempts: { used: 2, max: 3 }, nextDeadlineAt: T0 + 100 },
  },
  { name: "none once ended", plan: escalating, given: [claimed("charge"), succeeded("charge")], triage: undefined },
];

describe("the list's line for a workflow", () => {
  it.each(rows)("$name", ({ plan: workflowPlan, startAt, given, triage }) => {
    const run = new Run(workflowPlan, startAt === undefined ? {} : { startAt }).play(given);
    expect(triageOf(run.state)).toEqual(triage);
  });
});

describe("why an attempt failed, in a few words", () => {
  it.each([
    { error: { message: "HTTP 503", status: 503 }, progress: undefined, words: "503" },
    { error: { message: "no heartbeat", timeout: "heartbeat" }, progress: { percent: 47 }, words: "no heartbeat at 47 %" },
    { error: { message: "no heartbeat", timeout: "heartbeat" }, progress: undefined, words: "no heartbeat" },
    { error: { message: "stalled", timeout: "stalled" }, progress: "47 %", words: "stalled at 47 %" },
    { error: { message: "stalled", timeout: "stalled" }, progress: undefined, words: "no progress" },
    { error: { message: "took too long", timeout: "start_to_close" }, progress: undefined, words: "a timeout" },
    { error: { message: "not claimed", timeout: "schedule_to_start" }, progress: undefined, words: "not started in time" },
    { error: { message: "no event", timeout: "wait_timeout" }, progress: undefined, words: "the wait timed out" },
    { error: { message: `declined: ${"x".repeat(80)}` }, progress: undefined, words: `declined: ${"x".repeat(49)}…` },
    { error: undefined, progress: undefined, words: "an error" },
  ])("$words", ({ error, progress, words }) => {
    expect(causeOf(error, progress)).toBe(words);
  });

  it.each([
    { progress: { jobId: "j", percent: 47 }, words: "47 %" },
    { progress: 12.5, words: "12.5 %" },
    { progress: "3 of 8 pages", words: "3 of 8 pages" },
    { progress: "a text far too long to be read in a list's one line", words: undefined },
    { progress: { jobId: "j" }, words: undefined },
    { progress: undefined, words: undefined },
  ])("progress $progress reads $words", ({ progress, words }) => {
    expect(progressWords(progress)).toBe(words);
  });
});
