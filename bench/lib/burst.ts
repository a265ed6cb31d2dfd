// The burst case: W five-step workflows started the way a user's callers would start them, by many clients
// at once and as fast as the engine accepts them, against a remote that answers at once. It shows whether
// the engine's own queue stays short enough under a backlog that no first attempt waits out the default
// schedule-to-start timeout (the steps set none, so the engine's default applies), and whether goodput
// (steps/s) holds as W grows. Clients honour back-pressure: 429/503 with Retry-After is tried again later.
// Every wait is bounded; a run that cannot finish reports what did not end instead of hanging.
import { mapPool, sampleEvery, sleep } from "../../scripts/lib/async.ts";
import { percentile } from "../../scripts/lib/stats.ts";
import type { Engine, WorkflowStatus } from "./engines/engine.ts";
import { cancelAll, cpuPerStatusRead, waitForLastSteps, watchRemote } from "./load-phases.ts";
import type { RemoteProgress } from "./load-phases.ts";
import { cpuMs, sampleRss } from "./proc-readings.ts";
import { now } from "./remote.ts";
import { newStartTally, START_RETRY_BUDGET_MS, startWithBackPressure } from "./starts.ts";
import type { StartTally } from "./starts.ts";
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS, idFor, STEPS_PER_WORKFLOW, stepsFor } from "./workload.ts";
import type { BenchContext } from "./workload.ts";

/** However the deadline falls, the engine gets this long after the last start to finish what it accepted. */
const MIN_WAIT_AFTER_STARTS_MS = 60_000;

export interface BurstRun {
  tag: string;
  workflows: number;
  /** Concurrent clients starting the burst. */
  clients: number;
  /** Bounds the wait for workflows to end, from the first start (with cutOff: the whole run). */
  timeoutMs: number;
  cutOff?: boolean;
}

/** The figures of the ended workflows' views (undefined for an engine without views). */
export type ViewFigures = {
  queueLagP50Ms: number | undefined;
  queueLagP99Ms: number | undefined;
  schedToStartTimeouts: number | undefined;
  attemptsPerStep: number | undefined;
};

export type BurstFigures = ViewFigures & {
  workflows: number;
  clients: number;
  completed: number;
  failed: number;
  notEnded: number;
  startFailures: number;
  stepsPerSec: number | undefined;
  wallS: number | undefined;
  startPhaseS: number;
  maxReportedLagMs: number | undefined;
  cpuMsPerStep: number | undefined;
  startPhaseCpuMsPerStart: number | undefined;
  stepsDuringStartPhase: number;
  cpuMsPerStepAfterStarts: number | undefined;
  workerdRestarted: number;
  peakRssMb: number;
  backPressureAnswers: number;
  retryAfterWaitS: number;
  startNoAnswers: number;
  firstStartError: string | undefined;
};

/** When the run began, and what was running at its start. */
interface Begun {
  pids: number[];
  cpuBefore: number;
  startedAt: number;
  firstStartMs: number;
}

/** The start phase's outcome: who was started, when the last start was answered, the CPU and steps by then. */
interface BurstStarts {
  started: string[];
  startsDoneAt: number;
  atStartsDone: { cpu: number; steps: number };
  tally: StartTally;
}

/** What the run measured after the starts. */
interface Measured {
  outcomes: Map<string, WorkflowStatus>;
  reads: number;
  notEnded: string[];
  peakRssKb: number;
  maxReportedLagMs: number | undefined;
  /** A workerd that died and was started again mid-run took its CPU figures with it. */
  workerdRestarted: boolean;
  cpuRun: number;
  cpuPerRead: number;
}

/**
 * Figures for one W (see BurstFigures). `timeoutMs` bounds the wait for workflows to end, from the first
 * start; the start phase has its own bound (START_RETRY_BUDGET_MS per start, and no start is begun once
 * max(that, timeoutMs) has passed since the first). With `cutOff`, `timeoutMs` bounds the whole run.
 */
export async function burst(ctx: BenchContext, engine: Engine, run: BurstRun): Promise<BurstFigures> {
  const progress = watchRemote(ctx.remote, `${ctx.runTag}-${run.tag}-`);
  const pids = engine.workerdPids();
  const cpuBefore = cpuMs(pids);
  const stopRss = sampleRss(() => pids);
  const stopLag = await watchDispatchLag(engine);
  const begun: Begun = { pids, cpuBefore, startedAt: now(), firstStartMs: Date.now() };
  try {
    const starts = await startBurst(ctx, engine, run, begun, progress);
    const { timeoutMs, cutOff = false, clients } = run;
    const deadline = cutOff ? begun.firstStartMs + timeoutMs : Math.max(begun.firstStartMs + timeoutMs, Date.now() + MIN_WAIT_AFTER_STARTS_MS);
    await waitForLastSteps(progress, starts.started.length, deadline);
    const { outcomes, reads } = await readUntilEnded(engine, starts.started, clients, deadline);
    const peakRssKb = stopRss();
    const maxReportedLagMs = stopLag();
    const workerdRestarted = engine.workerdPids().join(",") !== pids.join(",");
    const cpuRun = cpuMs(pids) - cpuBefore;
    const cpuPerRead = await cpuPerStatusRead(engine, pids, starts.started, clients);
    const notEnded = starts.started.filter((id) => !outcomes.has(id));
    await cancelAll(engine, notEnded, clients);
    const measured: Measured = { outcomes, reads, notEnded, peakRssKb, maxReportedLagMs, workerdRestarted, cpuRun, cpuPerRead };
    return burstFigures(run, begun, starts, progress.stepsSeen.size, measured);
  } finally {
    stopRss();
    stopLag();
    progress.stop();
  }
}

/** Every workflow started by `clients` concurrent clients; throws when every start failed. */
async function startBurst(ctx: BenchContext, engine: Engine, { tag, workflows, clients, timeoutMs, cutOff = false }: BurstRun, begun: Begun, progress: RemoteProgress): Promise<BurstStarts> {
  const ids = Array.from({ length: workflows }, (_, index) => idFor(ctx, tag, index));
  const tally = newStartTally();
  // Cut off (--burst-cap): no start begun and no wait after `timeoutMs`, whatever is left unstarted or running.
  const startsClosedAt = begun.firstStartMs + (cutOff ? timeoutMs : Math.max(START_RETRY_BUDGET_MS, timeoutMs));
  const spec = (id: string) => ({ id, steps: stepsFor(ctx.remote.url, STEPS_PER_WORKFLOW), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS });
  const startedFlags = await mapPool(ids, clients, (id) => startWithBackPressure(engine, spec(id), tally, startsClosedAt));
  const startsDoneAt = now();
  // Starts and steps apart: the start phase's CPU (with the steps that ran meanwhile), then the steps' alone.
  const atStartsDone = { cpu: cpuMs(begun.pids), steps: progress.stepsSeen.size };
  const started = ids.filter((_, index) => startedFlags[index]);
  if (started.length === 0) throw new Error(`${engine.label}: every start failed, e.g. ${tally.firstError}`);
  return { started, startsDoneAt, atStartsDone, tally };
}

function burstFigures({ workflows, clients }: BurstRun, begun: Begun, starts: BurstStarts, executedSteps: number, measured: Measured): BurstFigures {
  const { startedAt, cpuBefore } = begun;
  const { started, startsDoneAt, atStartsDone, tally } = starts;
  const { outcomes, reads, notEnded, peakRssKb, maxReportedLagMs, workerdRestarted, cpuRun, cpuPerRead } = measured;
  const ended = [...outcomes.values()];
  const completed = ended.filter((status) => status.completed);
  // The engine's own completion stamps: reading the statuses back adds nothing to the wall time.
  const endedAt = completed.length > 0 ? Math.max(...completed.map((status) => status.endedAt ?? 0)) : undefined;
  const wallMs = endedAt === undefined ? undefined : endedAt - startedAt;
  // A workerd that died and was started again mid-run took its CPU figures with it: no figure rather than a wrong one.
  const cpuFigure = (value: number): number | undefined => (workerdRestarted ? undefined : Math.max(0, value));
  const stepsAfterStarts = executedSteps - atStartsDone.steps;
  return {
    workflows,
    clients,
    completed: completed.length,
    failed: ended.length - completed.length,
    notEnded: notEnded.length,
    startFailures: workflows - started.length,
    stepsPerSec: wallMs !== undefined && wallMs > 0 ? (completed.length * STEPS_PER_WORKFLOW) / (wallMs / 1000) : undefined,
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
}

/**
 * Reads every workflow until it has ended or the deadline passes; returns the ended ones' statuses (with
 * their views) and how many reads it took, to discount their CPU. A read answered with an HTTP error (an
 * overloaded object, a timeout) says nothing about the workflow: it is read again in the next pass.
 */
async function readUntilEnded(engine: Engine, ids: string[], concurrency: number, deadline: number): Promise<{ outcomes: Map<string, WorkflowStatus>; reads: number }> {
  const outcomes = new Map<string, WorkflowStatus>();
  let reads = 0;
  let pending = ids;
  for (;;) {
    const statuses = await mapPool(pending, concurrency, async (id) => {
      reads++;
      return [id, await engine.readStatus(id).catch(() => undefined)] as const;
    });
    for (const [id, status] of statuses) if (status?.terminal && !status.state.startsWith("http_")) outcomes.set(id, status);
    pending = pending.filter((id) => !outcomes.has(id));
    if (pending.length === 0 || Date.now() >= deadline) return { outcomes, reads };
    await sleep(100);
  }
}

/**
 * Figures from the ended workflows' views, for an engine that has them (Shepherd); undefined otherwise.
 * Queue lag is how long the first step's first attempt waited before an agent claimed it; an attempt that
 * timed out unclaimed counts its wait until the timeout, a lower bound, so the failures the case looks for
 * are not left out of the percentiles.
 */
export function viewFigures(ended: readonly WorkflowStatus[]): ViewFigures {
  const views = ended.filter((status) => Array.isArray(status.steps));
  if (views.length === 0) {
    return { queueLagP50Ms: undefined, queueLagP99Ms: undefined, schedToStartTimeouts: undefined, attemptsPerStep: undefined };
  }
  const lags: number[] = [];
  let schedToStartTimeouts = 0;
  let attempts = 0;
  let steps = 0;
  for (const { steps: stepViews = [], completed } of views) {
    const first = stepViews[0]?.attempts[0];
    const claimedOrGaveUpAt = first?.startedAt ?? (first?.timeout === "schedule_to_start" ? first.endedAt : undefined);
    if (first && claimedOrGaveUpAt !== undefined) lags.push(claimedOrGaveUpAt - (first.scheduledAt ?? NaN));
    for (const step of stepViews) {
      for (const attempt of step.attempts) if (attempt.timeout === "schedule_to_start") schedToStartTimeouts++;
    }
    if (completed) {
      steps += stepViews.length;
      attempts += stepViews.reduce((sum, step) => sum + step.attempts.filter((attempt) => attempt.kind === "action").length, 0);
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
async function watchDispatchLag(engine: Engine): Promise<() => number | undefined> {
  const dispatchInfo = engine.dispatchInfo?.bind(engine);
  const first = await dispatchInfo?.().catch(() => undefined);
  if (dispatchInfo === undefined || first === undefined) return () => undefined;
  let maxLagMs: number | undefined;
  const record = (info: { lagMs: number | null } | undefined): void => {
    if (info && Number.isFinite(info.lagMs)) maxLagMs = Math.max(maxLagMs ?? 0, info.lagMs ?? 0);
  };
  record(first);
  // A sample lost to a busy engine is skipped; the next second tries again.
  const sampler = sampleEvery(1_000, async () => record(await dispatchInfo().catch(() => undefined)));
  return () => {
    void sampler.stop();
    return maxLagMs;
  };
}
