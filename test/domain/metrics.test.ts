import { describe, expect, it } from "vitest";
import type { HistoryEntry } from "../../src/domain/machine/history";
import { countHistory, emptyLateness, emptyMetrics, LATENESS_BOUNDS_MS, latenessQuantile, observeLateness, type WorkflowMetrics } from "../../src/domain/machine/metrics";
import { claimed, deadlinesReached, failed, failedPermanently, plan, Run, step, succeeded, undoable, wait } from "./builders";

const late = (overdueMs: number) => ({ timeout: "heartbeat" as const, deadlineAt: 1_000, overdueMs });
const error = { message: "HTTP 422", retryable: false, status: 422 };

type Expected = Partial<Omit<WorkflowMetrics, "timeouts">> & { timeouts?: Partial<WorkflowMetrics["timeouts"]> };

/** Each entry alone, and what it adds to fresh counters (`lateness` aside, checked below). */
const rows: [name: string, entry: HistoryEntry, expected: Expected][] = [
  ["an attempt an agent began", { type: "step_started", stepId: "a", attempt: 1, data: { kind: "action" } }, { attempts: 1 }],
  ["a compensation an agent began", { type: "step_started", stepId: "a", attempt: 3, data: { kind: "compensation" } }, { attempts: 1 }],
  ["a retry scheduled", { type: "step_retry_scheduled", stepId: "a", attempt: 1, data: { kind: "action", delayMs: 100, nextRetryAt: 2_000 } }, { retries: 1 }],
  ["a missed heartbeat", { type: "step_heartbeat_missed", stepId: "a", attempt: 1, data: late(3) }, { timeouts: { heartbeat: 1 } }],
  [
    "a start-to-close timeout",
    { type: "step_timed_out", stepId: "a", attempt: 1, data: { timeout: "start_to_close", deadlineAt: 1_000, overdueMs: 3 } },
    { timeouts: { start_to_close: 1 } },
  ],
  [
    "a schedule-to-start timeout",
    { type: "step_timed_out", stepId: "a", attempt: 1, data: { timeout: "schedule_to_start", deadlineAt: 1_000, overdueMs: 3 } },
    { timeouts: { schedule_to_start: 1 } },
  ],
  [
    "a stalled attempt",
    { type: "step_stalled", stepId: "a", attempt: 1, data: { progressMs: 500, progressAt: 500, deadlineAt: 1_000, overdueMs: 3 } },
    { timeouts: { stalled: 1 } },
  ],
  ["a compensated step", { type: "step_compensated", stepId: "a", attempt: 2 }, { compensations: 1 }],
  ["an escalation", { type: "workflow_escalated", stepId: "a", data: { phase: "action", error } }, { escalations: 1 }],
];

/** Entries that count nothing, not even lateness: no counters are made for them. */
const uncounted: HistoryEntry[] = [
  { type: "workflow_started", data: { name: "flow" } },
  { type: "step_scheduled", stepId: "a", attempt: 1, data: { kind: "action" } },
  { type: "step_succeeded", stepId: "a", attempt: 1 },
  { type: "step_failed", stepId: "a", attempt: 1, data: { kind: "action", error, final: true } },
  { type: "stale_report_rejected", stepId: "a", attempt: 1, data: { report: "succeeded", currentAttempt: 2 } },
  { type: "workflow_timed_out", data: { deadlineAt: 1_000 } },
  { type: "workflow_completed" },
];

function expectedAfter(expected: Expected): WorkflowMetrics {
  const fresh = emptyMetrics();
  return { ...fresh, ...expected, timeouts: { ...fresh.timeouts, ...expected.timeouts } };
}

describe("counting a transition's history entries", () => {
  it.each(rows)("counts %s", (_name, entry, expected) => {
    const { lateness, ...counted } = countHistory(undefined, [entry])!;
    expect(counted).toEqual(expectedAfter(expected));
    expect(lateness?.count ?? 0).toBe("data" in entry && "overdueMs" in entry.data ? 1 : 0);
  });

  it.each(uncounted.map((entry) => [entry.type, entry] as const))("makes no counters for %s", (_type, entry) => {
    expect(countHistory(undefined, [entry])).toBeUndefined();
  });

  it("adds to the counters it is given, in place", () => {
    const metrics = emptyMetrics();
    metrics.attempts = 4;

    const counted = countHistory(metrics, [rows[0]![1], rows[0]![1], uncounted[1]!]);

    expect(counted).toBe(metrics);
    expect(metrics.attempts).toBe(6);
  });

  it("observes the lateness of every entry with a numeric overdueMs: timeouts, stalls, waits and expired escalations", () => {
    const entries: HistoryEntry[] = [
      { type: "step_heartbeat_missed", stepId: "a", attempt: 1, data: late(7) },
      { type: "step_timed_out", stepId: "a", attempt: 2, data: { timeout: "start_to_close", deadlineAt: 1_000, overdueMs: 40 } },
      { type: "step_stalled", stepId: "a", attempt: 3, data: { progressMs: 500, progressAt: 500, deadlineAt: 1_000, overdueMs: 300 } },
      { type: "wait_timed_out", stepId: "w", data: { event: "approved", onTimeout: "fail", timeoutAt: 1_000, overdueMs: 2_000 } },
      { type: "escalation_expired", stepId: "a", data: { then: "compensate", deadlineAt: 1_000, overdueMs: 90_000 } },
    ];

    const lateness = countHistory(undefined, entries)!.lateness!;

    expect(lateness).toEqual({ buckets: [1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1], count: 5, sumMs: 92_347, maxMs: 90_000 });
  });
});

describe("the detection-lateness histogram", () => {
  it.each<[ms: number, bucket: number]>([
    [0, 0],
    [10, 0],
    [11, 1],
    [60_000, LATENESS_BOUNDS_MS.length - 1],
    [60_001, LATENESS_BOUNDS_MS.length],
  ])("puts %i ms in bucket %i (bounds are inclusive)", (ms, bucket) => {
    const metrics = emptyMetrics();
    observeLateness(metrics, ms);
    expect(metrics.lateness!.buckets.indexOf(1)).toBe(bucket);
  });

  it("counts a negative lateness (a clock that stepped back) as 0", () => {
    const metrics = emptyMetrics();
    observeLateness(metrics, -5);
    expect(metrics.lateness).toMatchObject({ count: 1, sumMs: 0, maxMs: 0, buckets: [1, ...new Array(LATENESS_BOUNDS_MS.length).fill(0)] });
  });

  it("has no quantiles while empty", () => {
    expect(latenessQuantile(emptyLateness(), 0.5)).toBeNull();
  });

  it.each<[name: string, observations: number[], q: number, expected: number]>([
    ["the bucket bound of the median", [3, 40, 45, 300], 0.5, 50],
    ["the bucket bound of the 99th percentile", [3, 40, 45, 300], 0.99, 300],
    ["the max when it is below the bucket's bound", [3, 4, 5], 0.5, 5],
    ["the max for a rank in the +Inf bucket", [3, 120_000], 0.99, 120_000],
    ["the lowest bucket for the smallest quantile", [3, 40, 45, 300], 0.01, 10],
  ])("reads %s", (_name, observations, q, expected) => {
    const metrics = emptyMetrics();
    for (const ms of observations) observeLateness(metrics, ms);
    expect(latenessQuantile(metrics.lateness!, q)).toBe(expected);
  });

  it("reads the same quantiles from two workflows' histograms summed bucket by bucket as from one with all observations", () => {
    const [one, other, both] = [emptyMetrics(), emptyMetrics(), emptyMetrics()];
    for (const ms of [1, 30, 700]) [one, both].forEach((m) => observeLateness(m, ms));
    for (const ms of [20, 20, 9_000, 45_000]) [other, both].forEach((m) => observeLateness(m, ms));
    const [a, b] = [one.lateness!, other.lateness!];
    const summed = { buckets: a.buckets.map((n, i) => n + b.buckets[i]!), count: a.count + b.count, sumMs: a.sumMs + b.sumMs, maxMs: Math.max(a.maxMs, b.maxMs) };

    expect(summed).toEqual(both.lateness);
    for (const q of [0.5, 0.9, 0.99]) expect(latenessQuantile(summed, q)).toBe(latenessQuantile(both.lateness!, q));
  });
});

describe("the state machine's counters", () => {
  const policy = { retry: { maxAttempts: 3, initialIntervalMs: 100, backoffCoefficient: 2, maxIntervalMs: 1_000, jitter: 0 } };

  it("start with none and stay without any while nothing counted", () => {
    const run = new Run(plan([step("a")]));
    expect(run.state.metrics).toBeUndefined();
  });

  it("count what a workflow did: a retry, a missed heartbeat, a compensation, all from its history", () => {
    const run = new Run(plan([undoable("a"), step("b", { dependsOn: ["a"] })], { defaults: { ...policy, timeouts: { startToCloseMs: 5_000, heartbeatMs: 1_000 } } }));
    run.play([claimed("a"), failed("a"), wait(100), deadlinesReached(), claimed("a", 2), succeeded("a", 2)]);
    run.play([claimed("b"), wait(1_030), deadlinesReached(), wait(200), deadlinesReached(), claimed("b", 2), failedPermanently("b", 2)]);
    run.play([claimed("a", 3), succeeded("a", 3)]);

    expect(run.state.status).toBe("compensated");
    expect(run.state.metrics).toEqual({
      attempts: 5,
      retries: 2,
      timeouts: { heartbeat: 1, start_to_close: 0, schedule_to_start: 0, stalled: 0 },
      compensations: 1,
      escalations: 0,
      lateness: { buckets: [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], count: 1, sumMs: 30, maxMs: 30 },
    });
  });

  it("count an escalation, and nothing for a transition that changed nothing (a stale report)", () => {
    const run = new Run(plan([step("a")], { onFailure: "escalate" }));
    run.play([claimed("a"), failedPermanently("a")]);
    const before = structuredClone(run.state.metrics);

    const stale = run.send(succeeded("a", 7));

    expect(stale.changed).toBe(false);
    expect(run.state.metrics).toEqual(before);
    expect(before).toMatchObject({ attempts: 1, escalations: 1 });
  });

  it("never change the state they were given (the machine works on a copy)", () => {
    const run = new Run(plan([step("a")]));
    run.send(claimed("a"));
    const given = run.state;
    const snapshot = structuredClone(given.metrics);

    run.play([failed("a")]);

    expect(given.metrics).toEqual(snapshot);
    expect(run.state.metrics?.retries).toBe(1);
  });
});
