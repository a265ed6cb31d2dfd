// The measurements. Each case drives one engine through the same adapter interface (startWorkflow,
// readStatus) against the bench's remote, and returns a flat object of named figures for one repeat.
// Every wait is bounded; a case that cannot finish throws, and the run reports it instead of hanging.
import { mapPool, sleep, waitUntil } from "../../scripts/lib/async.ts";
import { percentile } from "../../scripts/lib/stats.ts";
import { cpuMs, memoryKb, sampleRss } from "./proc-readings.ts";
import { now } from "./remote.ts";
import { newStartTally, startWithBackPressure } from "./starts.ts";

export const STEPS_PER_WORKFLOW = 5;
/** Shepherd's defaults, spelled out so both engines get the same policy (Workflows via toWorkflowsRetry). */
export const DEFAULT_RETRY = { maxAttempts: 3, initialIntervalMs: 1000, backoffCoefficient: 2, jitter: 0.2 };
export const DEFAULT_TIMEOUTS = { startToCloseMs: 300_000, heartbeatMs: 30_000 };
/** The retry case's policy: one retry, as soon as possible. 0 is the smallest interval both engines accept. */
const IMMEDIATE_RETRY = { maxAttempts: 2, initialIntervalMs: 0, backoffCoefficient: 2, jitter: 0 };
/** The same fixed interval for every status poll of both engines. */
const POLL_INTERVAL_MS = 10;
/** Workflow ids use only [a-z0-9-], which both engines accept. */
export const idFor = (ctx, tag, index) => `${ctx.runTag}-${tag}-${index}`;

export function stepsFor(remoteUrl, count, pathFor = () => "/ok") {
  return Array.from({ length: count }, (_, index) => ({ id: `s${index + 1}`, url: `${remoteUrl}${pathFor(index)}` }));
}

/** Polls one workflow every POLL_INTERVAL_MS until it ends; returns { status, observedAt }. */
async function pollUntilTerminal(engine, id, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await engine.readStatus(id);
    if (status.terminal) return { status, observedAt: now() };
    if (Date.now() > deadline) throw new Error(`${engine.label}: workflow ${id} not finished after ${timeoutMs} ms (state ${status.state})`);
    await sleep(POLL_INTERVAL_MS);
  }
}

/**
 * W workflows of 5 sequential steps, started with bounded concurrency. `slowFraction` of the steps call
 * /slow (5 s) instead of /ok. Completion is detected without loading the engine while it works: the
 * harness waits until the remote has seen every workflow's last step, then reads each workflow once (again
 * for the few not yet ended). The end time is the engines' own completion stamp, so the read-back adds
 * nothing to the wall time; its CPU is measured by a second identical pass and subtracted.
 */
export async function throughput(ctx, engine, { tag, workflows, concurrency, slowFraction = 0, timeoutMs, probe }) {
  const { remote } = ctx;
  const ids = Array.from({ length: workflows }, (_, index) => idFor(ctx, tag, index));
  const slowEvery = slowFraction > 0 ? Math.round(1 / slowFraction) : 0;
  // Every slowEvery-th step across the run is slow: exactly the asked fraction, spread over all positions.
  const pathFor = (workflowIndex) => (stepIndex) =>
    slowEvery && (workflowIndex * STEPS_PER_WORKFLOW + stepIndex) % slowEvery === slowEvery - 1 ? "/slow?ms=5000" : "/ok";
  const prefix = `${ctx.runTag}-${tag}-`;
  const lastStep = `:s${STEPS_PER_WORKFLOW}`;
  const finished = new Set();
  let lastProgressAt = Date.now();
  const onRequest = (key) => {
    if (!key.startsWith(prefix)) return;
    lastProgressAt = Date.now();
    if (key.endsWith(lastStep)) finished.add(key);
  };
  remote.events.on("request", onRequest);

  const pids = engine.workerdPids();
  // A probe (--profile) brackets the load alone: started before the first start request, stopped once the
  // remote has seen every last step, so neither the read-back nor the probe's own stop is in it.
  await probe?.start();
  const cpuBefore = cpuMs(pids);
  const rssBeforeKb = memoryKb(pids).rssKb;
  const stopRss = sampleRss(() => pids);
  const startedAt = now();
  const deadline = Date.now() + timeoutMs;
  const tally = newStartTally();
  try {
    // Back-pressure (429/503 + Retry-After) is honoured as any client would; a start that still fails counts as
    // failed and must not end the whole run.
    const startedFlags = await mapPool(ids, concurrency, (id, index) =>
      startWithBackPressure(engine, { id, steps: stepsFor(remote.url, STEPS_PER_WORKFLOW, pathFor(index)), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS }, tally, deadline),
    );
    const started = ids.filter((_, index) => startedFlags[index]);
    const startFailures = workflows - started.length;
    const startsDoneAt = now();
    if (startFailures === workflows) throw new Error(`${engine.label}: every start failed, e.g. ${tally.firstError}`);

    // Wait for the remote to see every last step; give up on a stall (nothing arrives for 30 s) or the deadline.
    while (finished.size < workflows - startFailures && Date.now() < deadline && Date.now() - lastProgressAt < 30_000) {
      await sleep(50);
    }
    // The probe's stop (a profile serialised inside workerd) is not the engine's work: its CPU is taken out.
    const cpuBeforeProbeStop = cpuMs(pids);
    await probe?.stop();
    const probeStopCpuMs = probe ? cpuMs(pids) - cpuBeforeProbeStop : 0;

    // Read every workflow until it has ended (most already have); count the reads to discount their CPU.
    const outcomes = new Map();
    let reads = 0;
    let pending = started;
    while (pending.length > 0 && Date.now() < deadline) {
      const statuses = await mapPool(pending, concurrency, async (id) => {
        reads++;
        // A read that times out is tried again in the next pass, until the deadline.
        return [id, await engine.readStatus(id).catch(() => ({ terminal: false }))];
      });
      for (const [id, status] of statuses) if (status.terminal) outcomes.set(id, status);
      pending = pending.filter((id) => !outcomes.has(id));
      if (pending.length > 0) await sleep(100);
    }
    const peakRssKb = stopRss();
    const cpuRun = cpuMs(pids) - cpuBefore - probeStopCpuMs;

    // The same reads again, now that nothing else runs: their CPU per read, to take out of the run's figure.
    const cpuReadsBefore = cpuMs(pids);
    await mapPool(started, concurrency, (id) => engine.readStatus(id).catch(() => undefined));
    const cpuPerRead = (cpuMs(pids) - cpuReadsBefore) / started.length;

    // A run cut short leaves workflows running: end them so they do not weigh on the next measurement.
    if (pending.length > 0) await mapPool(pending, concurrency, (id) => engine.cancel(id).catch(() => undefined));

    const completed = [...outcomes.values()].filter((status) => status.completed);
    if (completed.length === 0) throw new Error(`${engine.label}: no workflow of ${tag} completed`);
    const endedAt = Math.max(...completed.map((status) => status.endedAt ?? 0));
    const wallMs = endedAt - startedAt;
    const steps = completed.length * STEPS_PER_WORKFLOW;
    return {
      workflows,
      completed: completed.length,
      notCompleted: workflows - completed.length,
      startFailures,
      backPressureAnswers: tally.backPressureAnswers,
      workflowsPerSec: completed.length / (wallMs / 1000),
      stepsPerSec: steps / (wallMs / 1000),
      wallS: wallMs / 1000,
      startPhaseS: (startsDoneAt - startedAt) / 1000,
      cpuMsPerStep: steps > 0 ? Math.max(0, cpuRun - cpuPerRead * reads) / steps : undefined,
      cpuMsPerStatusRead: cpuPerRead,
      peakRssMb: peakRssKb / 1024,
      // Objects of earlier runs stay in memory, so the peak carries them too; the growth is this run's own.
      rssGrowthMb: (peakRssKb - rssBeforeKb) / 1024,
    };
  } finally {
    stopRss();
    remote.events.off("request", onRequest);
  }
}

/**
 * One 5-step workflow at a time. Two figures per run: `latency` is the engine's own completion stamp minus
 * the moment the harness sent the start (Shepherd's endedAt; the baseline stamps Date.now() after its last
 * step), `observed` is when a status poll every POLL_INTERVAL_MS first saw it ended. For an engine with a
 * history (Shepherd), each step's time is split into hops from the history's timestamps and the remote's.
 * Returns raw samples: the report takes percentiles over all repeats' samples together.
 */
export async function latency(ctx, engine, { tag, runs }) {
  const samples = { latency: [], observed: [] };
  // Only an engine with a history can say where the time went.
  if (engine.history) Object.assign(samples, { accept: [], queueHop: [], claimToRemote: [], remoteToReport: [] });
  for (let run = 0; run < runs; run++) {
    const id = idFor(ctx, tag, run);
    const sentAt = now();
    const result = await engine.startWorkflow({ id, steps: stepsFor(ctx.remote.url, STEPS_PER_WORKFLOW), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS });
    if (!result.ok) throw new Error(`${engine.label}: start failed: ${result.status} ${result.error}`);
    const { status, observedAt } = await pollUntilTerminal(engine, id, 30_000);
    if (!status.completed) throw new Error(`${engine.label}: latency workflow ${id} ended ${status.state}`);
    if (status.endedAt !== undefined) samples.latency.push(status.endedAt - sentAt);
    samples.observed.push(observedAt - sentAt);
    if (engine.history) splitIntoHops(await engine.history(id), id, sentAt, ctx.remote, samples);
  }
  return {
    latencyP50Ms: percentile(samples.latency, 50),
    latencyP99Ms: percentile(samples.latency, 99),
    observedP50Ms: percentile(samples.observed, 50),
    samples,
  };
}

/**
 * Where a step's time goes, from the history's `at` stamps (the object's clock) and the remote's records:
 * scheduled -> claimed (queue send, delivery, claim), claimed -> request at the remote (agent), remote's
 * answer -> success applied (report). `accept` is the start request until workflow_started.
 */
function splitIntoHops(events, id, sentAt, remote, samples) {
  const find = (type, stepId) => events.find((event) => event.type === type && event.stepId === stepId && event.attempt === 1);
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
    samples.remoteToReport.push(succeeded.at - request.respondedAt);
  }
}

/**
 * A one-step workflow whose remote answers 503 once; retry policy: one retry with the minimum backoff.
 * Figure: from the moment the remote sent the 503 to the moment the retry request arrived.
 */
export async function retry(ctx, engine, { tag, samples: count }) {
  const gaps = [];
  for (let sample = 0; sample < count; sample++) {
    const id = idFor(ctx, tag, sample);
    const result = await engine.startWorkflow({ id, steps: stepsFor(ctx.remote.url, 1, () => "/fail-once"), retry: IMMEDIATE_RETRY, timeouts: DEFAULT_TIMEOUTS });
    if (!result.ok) throw new Error(`${engine.label}: start failed: ${result.status} ${result.error}`);
    const { status } = await pollUntilTerminal(engine, id, 30_000);
    const [first, second] = ctx.remote.requestsFor(`${id}:s1`);
    if (!status.completed || !second) throw new Error(`${engine.label}: retry workflow ${id} ended ${status.state} after ${ctx.remote.requestsFor(`${id}:s1`).length} request(s)`);
    gaps.push(second.arrivedAt - first.respondedAt);
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
export async function detection(ctx, engine, { tag, samples: count, startToCloseMs = 1000 }) {
  const samples = { overdue: [], deadlineToRetry: [], deadlineToRescheduled: [], rescheduledToClaimed: [] };
  for (let sample = 0; sample < count; sample++) {
    const id = idFor(ctx, tag, sample);
    const result = await engine.startWorkflow({
      id,
      steps: stepsFor(ctx.remote.url, 1, () => "/hang-once"),
      retry: IMMEDIATE_RETRY,
      timeouts: { startToCloseMs, heartbeatMs: 60_000 },
    });
    if (!result.ok) throw new Error(`${engine.label}: start failed: ${result.status} ${result.error}`);
    await pollUntilTerminal(engine, id, 30_000);
    const events = await engine.history(id);
    const timedOut = events.find((event) => event.type === "step_timed_out");
    if (!timedOut) throw new Error(`${engine.label}: no step_timed_out in the history of ${id}`);
    const { deadlineAt, overdueMs } = timedOut.data;
    samples.overdue.push(overdueMs);
    const second = ctx.remote.requestsFor(`${id}:s1`)[1];
    if (second) samples.deadlineToRetry.push(second.arrivedAt - deadlineAt);
    const rescheduled = events.find((event) => event.type === "step_scheduled" && event.attempt === 2);
    const claimed = events.find((event) => event.type === "step_started" && event.attempt === 2);
    if (rescheduled) samples.deadlineToRescheduled.push(rescheduled.at - deadlineAt);
    if (rescheduled && claimed) samples.rescheduledToClaimed.push(claimed.at - rescheduled.at);
  }
  return { overdueP50Ms: percentile(samples.overdue, 50), deadlineToRetryP50Ms: percentile(samples.deadlineToRetry, 50), samples };
}

/**
 * Storage work of the Scheduler object, from the dev-only GET /dev/workflows/{id} counters: per step over a
 * small run, and per minute for a workflow whose only step waits (the remote answered 202). Figures are
 * undefined (printed n/a) while the endpoint does not exist.
 */
export async function supervisor(ctx, engine, { tag, workflows, idleSeconds }) {
  const ids = Array.from({ length: workflows }, (_, index) => idFor(ctx, `${tag}-run`, index));
  await mapPool(ids, 10, async (id) => {
    const result = await engine.startWorkflow({ id, steps: stepsFor(ctx.remote.url, STEPS_PER_WORKFLOW), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS });
    if (!result.ok) throw new Error(`${engine.label}: start failed: ${result.status} ${result.error}`);
    await pollUntilTerminal(engine, id, 60_000);
  });
  const infos = await mapPool(ids, 10, (id) => engine.devInfo(id));
  if (infos.some((info) => info === undefined)) return { available: 0 };
  const steps = workflows * STEPS_PER_WORKFLOW;
  const total = (field) => infos.reduce((sum, info) => sum + info.storage[field], 0);

  // Idle: a step waiting on a 202'd job under long deadlines; the supervisor should do nothing meanwhile.
  const idleId = idFor(ctx, `${tag}-idle`, 0);
  const started = await engine.startWorkflow({
    id: idleId,
    steps: stepsFor(ctx.remote.url, 1, () => "/accept"),
    retry: DEFAULT_RETRY,
    timeouts: { startToCloseMs: 3_600_000, heartbeatMs: 3_600_000 },
  });
  if (!started.ok) throw new Error(`${engine.label}: start failed: ${started.status} ${started.error}`);
  await waitUntil(async () => (await engine.readStatus(idleId)).steps?.[0]?.status === "waiting", { timeoutMs: 30_000, what: `${idleId} waiting` });
  const before = await engine.devInfo(idleId);
  const beforeAt = now();
  await sleep(idleSeconds * 1000);
  const after = await engine.devInfo(idleId);
  const perMinute = 60_000 / (now() - beforeAt);
  // Counters live in the object's memory. If they went down, the idle object was evicted meanwhile (nothing
  // woke it), and what the fresh instance counted (taken before it loads anything) is all the idle work done.
  const evicted = after.storage.sqlCalls < before.storage.sqlCalls;
  const idle = (key) => (after.storage[key] === undefined ? undefined : (after.storage[key] - (evicted ? 0 : before.storage[key])) * perMinute);
  await engine.cancel(idleId);
  return {
    available: 1,
    sqlCallsPerStep: total("sqlCalls") / steps,
    rowsReadPerStep: total("rowsRead") / steps,
    rowsWrittenPerStep: total("rowsWritten") / steps,
    alarmWritesPerStep: infos[0].storage.alarmWrites === undefined ? undefined : total("alarmWrites") / steps,
    idleSqlCallsPerMin: idle("sqlCalls"),
    idleRowsReadPerMin: idle("rowsRead"),
    idleRowsWrittenPerMin: idle("rowsWritten"),
    idleAlarmWritesPerMin: idle("alarmWrites"),
    idleEvicted: evicted ? 1 : 0,
    idleAlarmAt: after.alarmAt,
  };
}

/** The throughput run at W workflows, without and then with 10 % of steps taking 5 s. */
export async function mixed(ctx, engine, { tag, workflows, concurrency, timeoutMs }) {
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
