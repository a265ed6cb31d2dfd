// The burst case: W five-step workflows started the way a user's callers would start them, by many clients
// at once and as fast as the engine accepts them, against a remote that answers at once. It shows whether
// the engine's own queue stays short enough under a backlog that no first attempt waits out the default
// schedule-to-start timeout (the steps set none, so the engine's default applies), and whether goodput
// (steps/s) holds as W grows. Clients honour back-pressure: 429/503 with Retry-After is tried again later.
// Every wait is bounded; a run that cannot finish reports what did not end instead of hanging.
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS, STEPS_PER_WORKFLOW, idFor, stepsFor } from "./cases.ts";
import { mapPool, sampleEvery, sleep } from "../../scripts/lib/async.ts";
import { percentile } from "../../scripts/lib/stats.ts";
import { cpuMs, sampleRss } from "./proc-readings.ts";
import { now } from "./remote.ts";
import { newStartTally, START_RETRY_BUDGET_MS, startWithBackPressure } from "./starts.ts";

/** Nothing reached the remote for this long: the engine has nothing left to do (or is stuck); stop waiting. */
const STALL_MS = 30_000;
/** However the deadline falls, the engine gets this long after the last start to finish what it accepted. */
const MIN_WAIT_AFTER_STARTS_MS = 60_000;

/**
 * Figures for one W (see the fields returned at the end). `timeoutMs` bounds the wait for workflows to end,
 * from the first start; the start phase has its own bound (START_RETRY_BUDGET_MS per start, and no start is
 * begun once max(that, timeoutMs) has passed since the first). With `cutOff`, `timeoutMs` bounds the whole run.
 */
export async function burst(ctx, engine, { tag, workflows, clients, timeoutMs, cutOff = false }) {
  const { remote } = ctx;
  const ids = Array.from({ length: workflows }, (_, index) => idFor(ctx, tag, index));
  const progress = watchRemote(remote, `${ctx.runTag}-${tag}-`);
  const pids = engine.workerdPids();
  const cpuBefore = cpuMs(pids);
  const stopRss = sampleRss(() => pids);
  const stopLag = await watchDispatchLag(engine);
  const startedAt = now();
  const firstStartMs = Date.now();
  try {
    const tally = newStartTally();
    // Cut off (--burst-cap): no start begun and no wait after `timeoutMs`, whatever is left unstarted or running.
    const startsClosedAt = firstStartMs + (cutOff ? timeoutMs : Math.max(START_RETRY_BUDGET_MS, timeoutMs));
    const spec = (id) => ({ id, steps: stepsFor(remote.url, STEPS_PER_WORKFLOW), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS });
    const startedFlags = await mapPool(ids, clients, (id) => startWithBackPressure(engine, spec(id), tally, startsClosedAt));
    const startsDoneAt = now();
    // Starts and steps apart: the start phase's CPU (with the steps that ran meanwhile), then the steps' alone.
    const atStartsDone = { cpu: cpuMs(pids), steps: progress.stepsSeen.size };
    const started = ids.filter((_, index) => startedFlags[index]);
    if (started.length === 0) throw new Error(`${engine.label}: every start failed, e.g. ${tally.firstError}`);

    const deadline = cutOff ? firstStartMs + timeoutMs : Math.max(firstStartMs + timeoutMs, Date.now() + MIN_WAIT_AFTER_STARTS_MS);
    await waitForLastSteps(progress, started.length, deadline);
    const { outcomes, reads } = await readUntilEnded(engine, started, clients, deadline);
    const peakRssKb = stopRss();
    const maxReportedLagMs = stopLag();
    // A workerd that died and was started again mid-run took its CPU figures with it: no figure rather than a wrong one.
    const workerdRestarted = engine.workerdPids().join(",") !== pids.join(",");
    const cpuRun = cpuMs(pids) - cpuBefore;
    const cpuPerRead = await cpuPerStatusRead(engine, pids, started, clients);

    // A run cut short leaves workflows running: end them so they do not weigh on the next measurement.
    const notEnded = started.filter((id) => !outcomes.has(id));
    await mapPool(notEnded, clients, (id) => engine.cancel(id).catch(() => undefined));

    const ended = [...outcomes.values()];
    const completed = ended.filter((status) => status.completed);
    // The engine's own completion stamps: reading the statuses back adds nothing to the wall time.
    const endedAt = completed.length > 0 ? Math.max(...completed.map((status) => status.endedAt ?? 0)) : undefined;
    const wallMs = endedAt === undefined ? undefined : endedAt - startedAt;
    const executedSteps = progress.stepsSeen.size;
    const cpuFigure = (value) => (workerdRestarted ? undefined : Math.max(0, value));
    const stepsAfterStarts = executedSteps - atStartsDone.steps;
    return {
      workflows,
      clients,
      completed: completed.length,
      failed: ended.length - completed.length,
      notEnded: notEnded.length,
      startFailures: workflows - started.length,
      stepsPerSec: wallMs > 0 ? (completed.length * STEPS_PER_WORKFLOW) / (wallMs / 1000) : undefined,
      wallS: wallMs === undefined ? undefined : wallMs / 1000,
      startPhaseS: (startsDoneAt - startedAt) / 1000,
      ...viewFigures(ended),
      maxReportedLagMs,
      // Per step that reached the remote at least once, so retries and failed workflows' work weigh in.
      cpuMsPerStep: executedSteps > 0 ? cpuFigure((cpuRun - cpuPerRead * reads) / executedSteps) : undefined,
      startPhaseCpuMsPerStart: cpuFigure((atStartsDone.cpu - cpuBefore) / started.length),
      stepsDuringStartPhase: atStartsDone.steps,
      cpuMsPerStepAfterStarts: stepsAfterStarts > 0 ? cpuFigure((cpuBefore + cpuRun - atStartsDone.cpu - cpuPerRead * reads) / stepsAfterStarts) : undefined,
      workerdRestarted: workerdRestarted ? 1 : 0,
      peakRssMb: peakRssKb / 1024,
      backPressureAnswers: tally.backPressureAnswers,
      retryAfterWaitS: tally.retryAfterWaitMs / 1000,
      startNoAnswers: tally.noAnswers,
      firstStartError: tally.firstError,
    };
  } finally {
    stopRss();
    stopLag();
    progress.stop();
  }
}

/**
 * Follows the run at the remote, so the harness need not poll the engine while it works: every step key
 * seen (executed steps) and every workflow whose last step arrived, and when anything last arrived.
 */
function watchRemote(remote, prefix) {
  const lastStep = `:s${STEPS_PER_WORKFLOW}`;
  const progress = { stepsSeen: new Set(), finished: new Set(), lastProgressAt: Date.now() };
  const onRequest = (key) => {
    if (!key.startsWith(prefix)) return;
    progress.lastProgressAt = Date.now();
    progress.stepsSeen.add(key);
    if (key.endsWith(lastStep)) progress.finished.add(key);
  };
  remote.events.on("request", onRequest);
  progress.stop = () => remote.events.off("request", onRequest);
  return progress;
}

/** Until the remote saw every started workflow's last step, nothing arrived for STALL_MS, or the deadline. */
async function waitForLastSteps(progress, started, deadline) {
  while (progress.finished.size < started && Date.now() < deadline && Date.now() - progress.lastProgressAt < STALL_MS) {
    await sleep(50);
  }
}

/**
 * Reads every workflow until it has ended or the deadline passes; returns the ended ones' statuses (with
 * their views) and how many reads it took, to discount their CPU. A read answered with an HTTP error (an
 * overloaded object, a timeout) says nothing about the workflow: it is read again in the next pass.
 */
async function readUntilEnded(engine, ids, concurrency, deadline) {
  const outcomes = new Map();
  let reads = 0;
  let pending = ids;
  for (;;) {
    const statuses = await mapPool(pending, concurrency, async (id) => {
      reads++;
      return [id, await engine.readStatus(id).catch(() => undefined)];
    });
    for (const [id, status] of statuses) if (status?.terminal && !status.state.startsWith("http_")) outcomes.set(id, status);
    pending = pending.filter((id) => !outcomes.has(id));
    if (pending.length === 0 || Date.now() >= deadline) return { outcomes, reads };
    await sleep(100);
  }
}

/** The CPU of one status read, measured by reading every workflow again now that nothing else runs. */
async function cpuPerStatusRead(engine, pids, ids, concurrency) {
  const before = cpuMs(pids);
  await mapPool(ids, concurrency, (id) => engine.readStatus(id).catch(() => undefined));
  return (cpuMs(pids) - before) / ids.length;
}

/**
 * Figures from the ended workflows' views, for an engine that has them (Shepherd); undefined otherwise.
 * Queue lag is how long the first step's first attempt waited before an agent claimed it; an attempt that
 * timed out unclaimed counts its wait until the timeout, a lower bound, so the failures the case looks for
 * are not left out of the percentiles.
 */
function viewFigures(ended) {
  const views = ended.filter((status) => Array.isArray(status.steps));
  if (views.length === 0) {
    return { queueLagP50Ms: undefined, queueLagP99Ms: undefined, schedToStartTimeouts: undefined, attemptsPerStep: undefined };
  }
  const lags = [];
  let schedToStartTimeouts = 0;
  let attempts = 0;
  let steps = 0;
  for (const status of views) {
    const first = status.steps[0]?.attempts?.[0];
    const claimedOrGaveUpAt = first?.startedAt ?? (first?.error?.timeout === "schedule_to_start" ? first.endedAt : undefined);
    if (claimedOrGaveUpAt !== undefined) lags.push(claimedOrGaveUpAt - first.scheduledAt);
    for (const step of status.steps) {
      for (const attempt of step.attempts ?? []) if (attempt.error?.timeout === "schedule_to_start") schedToStartTimeouts++;
    }
    if (status.completed) {
      steps += status.steps.length;
      attempts += status.steps.reduce((sum, step) => sum + (step.attempts ?? []).filter((attempt) => attempt.kind === "action").length, 0);
    }
  }
  return {
    queueLagP50Ms: percentile(lags, 50),
    queueLagP99Ms: percentile(lags, 99),
    schedToStartTimeouts,
    attemptsPerStep: steps > 0 ? attempts / steps : undefined,
  };
}

/**
 * Samples the engine's dev-only dispatch figures every second, for an engine that has them; the returned
 * stop() gives the largest lag it reported (undefined when it has no such route or reported no lag).
 */
async function watchDispatchLag(engine) {
  const first = await engine.dispatchInfo?.().catch(() => undefined);
  if (first === undefined) return () => undefined;
  let maxLagMs;
  const record = (info) => {
    if (Number.isFinite(info?.lagMs)) maxLagMs = Math.max(maxLagMs ?? 0, info.lagMs);
  };
  record(first);
  // A sample lost to a busy engine is skipped; the next second tries again.
  const sampler = sampleEvery(1_000, async () => record(await engine.dispatchInfo().catch(() => undefined)));
  return () => {
    sampler.stop();
    return maxLagMs;
  };
}
