// The measurements of one workflow at a time. Each case drives one engine through the same adapter interface
// (startWorkflow, readStatus) against the bench's remote, and returns a flat object of named figures for one
// repeat. Every wait is bounded; a case that cannot finish throws, and the run reports it instead of hanging.
// The load cases are throughput.ts and burst.ts.
import { mapPool, sleep, waitUntil } from "../../scripts/lib/async.ts";
import type { FakeRemote } from "../../scripts/lib/fake-remote.ts";
import { numberField } from "../../scripts/lib/json.ts";
import { percentile } from "../../scripts/lib/stats.ts";
import type { DevInfo, Engine, HistoryEvent, StorageCounters } from "./engines/engine.ts";
import { now } from "./remote.ts";
import type { Samples } from "./results.ts";
import { throughput } from "./throughput.ts";
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS, IMMEDIATE_RETRY, idFor, pollUntilTerminal, startOrThrow, STEPS_PER_WORKFLOW, stepsFor } from "./workload.ts";
import type { BenchContext } from "./workload.ts";

/** The history of a workflow, from an engine that keeps one (the cases that need it run only on such an engine). */
function historyOf(engine: Engine, id: string): Promise<HistoryEvent[]> {
  if (!engine.history) throw new Error(`${engine.label} keeps no history`);
  return engine.history(id);
}

export type LatencyFigures = {
  latencyP50Ms: number | undefined;
  latencyP99Ms: number | undefined;
  observedP50Ms: number | undefined;
  samples: Samples;
};

/**
 * One 5-step workflow at a time. Two figures per run: `latency` is the engine's own completion stamp minus
 * the moment the harness sent the start (Shepherd's endedAt; the baseline stamps Date.now() after its last
 * step), `observed` is when a status poll every POLL_INTERVAL_MS first saw it ended. For an engine with a
 * history (Shepherd), each step's time is split into hops from the history's timestamps and the remote's.
 * Returns raw samples: the report takes percentiles over all repeats' samples together.
 */
export async function latency(ctx: BenchContext, engine: Engine, { tag, runs }: { tag: string; runs: number }): Promise<LatencyFigures> {
  // Only an engine with a history can say where the time went.
  const hops: HopSamples | undefined = engine.history ? { accept: [], queueHop: [], claimToRemote: [], remoteToReport: [] } : undefined;
  const samples: Samples & { latency: number[]; observed: number[] } = { latency: [], observed: [], ...hops };
  for (let run = 0; run < runs; run++) {
    const id = idFor(ctx, tag, run);
    const sentAt = now();
    await startOrThrow(engine, { id, steps: stepsFor(ctx.remote.url, STEPS_PER_WORKFLOW), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS });
    const { status, observedAt } = await pollUntilTerminal(engine, id, 30_000);
    if (!status.completed) throw new Error(`${engine.label}: latency workflow ${id} ended ${status.state}`);
    if (status.endedAt !== undefined) samples.latency.push(status.endedAt - sentAt);
    samples.observed.push(observedAt - sentAt);
    if (hops) splitIntoHops(await historyOf(engine, id), id, sentAt, ctx.remote, hops);
  }
  return {
    latencyP50Ms: percentile(samples.latency, 50),
    latencyP99Ms: percentile(samples.latency, 99),
    observedP50Ms: percentile(samples.observed, 50),
    samples,
  };
}

/** A step's time in hops (see splitIntoHops). */
export interface HopSamples {
  accept: number[];
  queueHop: number[];
  claimToRemote: number[];
  remoteToReport: number[];
}

/**
 * Where a step's time goes, from the history's `at` stamps (the object's clock) and the remote's records:
 * scheduled -> claimed (queue send, delivery, claim), claimed -> request at the remote (agent), remote's
 * answer -> success applied (report). `accept` is the start request until workflow_started.
 */
export function splitIntoHops(events: readonly HistoryEvent[], id: string, sentAt: number, remote: Pick<FakeRemote, "requestsFor">, samples: HopSamples): void {
  const find = (type: string, stepId: string): HistoryEvent | undefined =>
    events.find((event) => event.type === type && event.stepId === stepId && event.attempt === 1);
  const started = events.find((event) => event.type === "workflow_started");
  if (started) samples.accept.push(started.at - sentAt);
  for (let index = 1; index <= STEPS_PER_WORKFLOW; index++) {
    const stepId = `s${index}`;
    const scheduled = find("step_scheduled", stepId);
    const claimed = find("step_started", stepId);
    const succeeded = find("step_succeeded", stepId);
    const request = remote.requestsFor(`${id}:${stepId}`)[0];
    if (!scheduled || !claimed || !succeeded || !request) continue;
    samples.queueHop.push(claimed.at - scheduled.at);
    samples.claimToRemote.push(request.arrivedAt - claimed.at);
    samples.remoteToReport.push(succeeded.at - (request.respondedAt ?? NaN));
  }
}

/**
 * A one-step workflow whose remote answers 503 once; retry policy: one retry with the minimum backoff.
 * Figure: from the moment the remote sent the 503 to the moment the retry request arrived.
 */
export async function retry(ctx: BenchContext, engine: Engine, { tag, samples: count }: { tag: string; samples: number }): Promise<{ retryGapP50Ms: number | undefined; samples: Samples }> {
  const gaps: number[] = [];
  for (let sample = 0; sample < count; sample++) {
    const id = idFor(ctx, tag, sample);
    await startOrThrow(engine, { id, steps: stepsFor(ctx.remote.url, 1, () => "/fail-once"), retry: IMMEDIATE_RETRY, timeouts: DEFAULT_TIMEOUTS });
    const { status } = await pollUntilTerminal(engine, id, 30_000);
    const [first, second] = ctx.remote.requestsFor(`${id}:s1`);
    if (!status.completed || !first || !second) throw new Error(`${engine.label}: retry workflow ${id} ended ${status.state} after ${ctx.remote.requestsFor(`${id}:s1`).length} request(s)`);
    gaps.push(second.arrivedAt - (first.respondedAt ?? NaN));
  }
  return { retryGapP50Ms: percentile(gaps, 50), samples: { retryGap: gaps } };
}

/**
 * Shepherd's supervisor: a one-step workflow whose remote never answers the first attempt, with
 * startToCloseMs 1000 and one immediate retry. From the history's step_timed_out: how late after the
 * deadline the supervisor acted (overdueMs); from the remote: deadline -> the retry's arrival, split at the
 * retry attempt's step_scheduled and step_started. One sample at a time, so each alarm is measured on an
 * otherwise idle engine.
 */
export async function detection(ctx: BenchContext, engine: Engine, { tag, samples: count, startToCloseMs = 1000 }: { tag: string; samples: number; startToCloseMs?: number }): Promise<{ overdueP50Ms: number | undefined; deadlineToRetryP50Ms: number | undefined; samples: Samples }> {
  const samples: Record<"overdue" | "deadlineToRetry" | "deadlineToRescheduled" | "rescheduledToClaimed", number[]> = { overdue: [], deadlineToRetry: [], deadlineToRescheduled: [], rescheduledToClaimed: [] };
  for (let sample = 0; sample < count; sample++) {
    const id = idFor(ctx, tag, sample);
    await startOrThrow(engine, { id, steps: stepsFor(ctx.remote.url, 1, () => "/hang-once"), retry: IMMEDIATE_RETRY, timeouts: { startToCloseMs, heartbeatMs: 60_000 } });
    await pollUntilTerminal(engine, id, 30_000);
    const events = await historyOf(engine, id);
    const timedOut = events.find((event) => event.type === "step_timed_out");
    if (!timedOut) throw new Error(`${engine.label}: no step_timed_out in the history of ${id}`);
    const deadlineAt = numberField(timedOut.data, "deadlineAt") ?? NaN;
    samples.overdue.push(numberField(timedOut.data, "overdueMs") ?? NaN);
    const second = ctx.remote.requestsFor(`${id}:s1`)[1];
    if (second) samples.deadlineToRetry.push(second.arrivedAt - deadlineAt);
    const rescheduled = events.find((event) => event.type === "step_scheduled" && event.attempt === 2);
    const claimed = events.find((event) => event.type === "step_started" && event.attempt === 2);
    if (rescheduled) samples.deadlineToRescheduled.push(rescheduled.at - deadlineAt);
    if (rescheduled && claimed) samples.rescheduledToClaimed.push(claimed.at - rescheduled.at);
  }
  return { overdueP50Ms: percentile(samples.overdue, 50), deadlineToRetryP50Ms: percentile(samples.deadlineToRetry, 50), samples };
}

/** What an idle workflow's object does per minute. */
type IdleFigures = {
  idleSqlCallsPerMin?: number;
  idleRowsReadPerMin?: number;
  idleRowsWrittenPerMin?: number;
  idleAlarmWritesPerMin?: number;
  idleEvicted?: number;
  idleAlarmAt?: number | null;
};

export type SupervisorFigures = {
  available: number;
  sqlCallsPerStep?: number;
  rowsReadPerStep?: number;
  rowsWrittenPerStep?: number;
  alarmWritesPerStep?: number;
} & IdleFigures;

/** The dev-only counters of a workflow, from an engine that has them; undefined while the endpoint does not exist. */
function devInfoOf(engine: Engine, id: string): Promise<DevInfo | undefined> {
  return engine.devInfo ? engine.devInfo(id) : Promise.resolve(undefined);
}

/**
 * Storage work of the Scheduler object, from the dev-only GET /dev/workflows/{id} counters: per step over a
 * small run, and per minute for a workflow whose only step waits (the remote answered 202). Figures are
 * undefined (printed n/a) while the endpoint does not exist.
 */
export async function supervisor(ctx: BenchContext, engine: Engine, { tag, workflows, idleSeconds }: { tag: string; workflows: number; idleSeconds: number }): Promise<SupervisorFigures> {
  const ids = Array.from({ length: workflows }, (_, index) => idFor(ctx, `${tag}-run`, index));
  await mapPool(ids, 10, async (id) => {
    await startOrThrow(engine, { id, steps: stepsFor(ctx.remote.url, STEPS_PER_WORKFLOW), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS });
    await pollUntilTerminal(engine, id, 60_000);
  });
  const infos = await mapPool(ids, 10, (id) => devInfoOf(engine, id));
  const counters = infos.filter((info) => info !== undefined).map((info) => info.storage);
  if (counters.length < infos.length) return { available: 0 };
  const steps = workflows * STEPS_PER_WORKFLOW;
  const total = (key: keyof StorageCounters): number => counters.reduce((sum, storage) => sum + (storage[key] ?? NaN), 0);
  return {
    available: 1,
    sqlCallsPerStep: total("sqlCalls") / steps,
    rowsReadPerStep: total("rowsRead") / steps,
    rowsWrittenPerStep: total("rowsWritten") / steps,
    alarmWritesPerStep: counters[0]?.alarmWrites === undefined ? undefined : total("alarmWrites") / steps,
    ...(await idleWork(ctx, engine, tag, idleSeconds)),
  };
}

/** Idle: a step waiting on a 202'd job under long deadlines; the supervisor should do nothing meanwhile. */
async function idleWork(ctx: BenchContext, engine: Engine, tag: string, idleSeconds: number): Promise<IdleFigures> {
  const idleId = idFor(ctx, `${tag}-idle`, 0);
  await startOrThrow(engine, { id: idleId, steps: stepsFor(ctx.remote.url, 1, () => "/accept"), retry: DEFAULT_RETRY, timeouts: { startToCloseMs: 3_600_000, heartbeatMs: 3_600_000 } });
  await waitUntil(async () => (await engine.readStatus(idleId)).steps?.[0]?.status === "waiting", { timeoutMs: 30_000, what: `${idleId} waiting` });
  const before = await devInfoOf(engine, idleId);
  const beforeAt = now();
  await sleep(idleSeconds * 1000);
  const after = await devInfoOf(engine, idleId);
  const perMinute = 60_000 / (now() - beforeAt);
  // Counters live in the object's memory. If they went down, the idle object was evicted meanwhile (nothing
  // woke it), and what the fresh instance counted (taken before it loads anything) is all the idle work done.
  const evicted = (after?.storage.sqlCalls ?? NaN) < (before?.storage.sqlCalls ?? NaN);
  const idle = (key: keyof StorageCounters): number | undefined => {
    const counted = after?.storage[key];
    return counted === undefined ? undefined : (counted - (evicted ? 0 : (before?.storage[key] ?? NaN))) * perMinute;
  };
  await engine.cancel(idleId);
  return {
    idleSqlCallsPerMin: idle("sqlCalls"),
    idleRowsReadPerMin: idle("rowsRead"),
    idleRowsWrittenPerMin: idle("rowsWritten"),
    idleAlarmWritesPerMin: idle("alarmWrites"),
    idleEvicted: evicted ? 1 : 0,
    idleAlarmAt: after?.alarmAt,
  };
}

/** The throughput run at W workflows, without and then with 10 % of steps taking 5 s. */
export async function mixed(ctx: BenchContext, engine: Engine, { tag, workflows, concurrency, timeoutMs }: { tag: string; workflows: number; concurrency: number; timeoutMs: number }) {
  const plain = await throughput(ctx, engine, { tag: `${tag}-plain`, workflows, concurrency, timeoutMs });
  const slow = await throughput(ctx, engine, { tag: `${tag}-slow`, workflows, concurrency, slowFraction: 0.1, timeoutMs });
  return {
    plainWorkflowsPerSec: plain.workflowsPerSec,
    slowWorkflowsPerSec: slow.workflowsPerSec,
    slowWallS: slow.wallS,
    slowNotCompleted: slow.notCompleted,
    slowdown: plain.workflowsPerSec / slow.workflowsPerSec,
  };
}
