// The throughput case: W workflows of 5 sequential steps, started with bounded concurrency, and how fast and
// at what CPU and memory the engine works through them. The mixed case is two throughput runs.
import { mapPool, sleep } from "../../scripts/lib/async.ts";
import type { Engine, WorkflowStatus } from "./engines/engine.ts";
import { cancelAll, cpuPerStatusRead, waitForLastSteps, watchRemote } from "./load-phases.ts";
import { cpuMs, memoryKb, sampleRss } from "./proc-readings.ts";
import type { Probe } from "./profiling.ts";
import { now } from "./remote.ts";
import { newStartTally, startWithBackPressure } from "./starts.ts";
import type { StartTally } from "./starts.ts";
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS, idFor, STEPS_PER_WORKFLOW, stepsFor } from "./workload.ts";
import type { BenchContext } from "./workload.ts";

export interface ThroughputRun {
  tag: string;
  workflows: number;
  concurrency: number;
  /** The share of steps that call /slow (5 s) instead of /ok. */
  slowFraction?: number;
  timeoutMs: number;
  /** --profile: brackets the load alone. */
  probe?: Probe;
}

export type ThroughputFigures = {
  workflows: number;
  completed: number;
  notCompleted: number;
  startFailures: number;
  backPressureAnswers: number;
  workflowsPerSec: number;
  stepsPerSec: number;
  wallS: number;
  startPhaseS: number;
  cpuMsPerStep: number | undefined;
  cpuMsPerStatusRead: number;
  peakRssMb: number;
  /** Objects of earlier runs stay in memory, so the peak carries them too; the growth is this run's own. */
  rssGrowthMb: number;
};

/**
 * The path of each step: every slowEvery-th step across the run (counted workflow after workflow) is slow,
 * so exactly the asked fraction. Which positions that hits depends on the fraction: at 10 % of 5-step
 * workflows, the last step of every other workflow.
 */
export function slowStepPaths(slowFraction: number): (workflowIndex: number) => (stepIndex: number) => string {
  const slowEvery = slowFraction > 0 ? Math.round(1 / slowFraction) : 0;
  return (workflowIndex) => (stepIndex) =>
    slowEvery && (workflowIndex * STEPS_PER_WORKFLOW + stepIndex) % slowEvery === slowEvery - 1 ? "/slow?ms=5000" : "/ok";
}

/**
 * `slowFraction` of the steps call /slow. Completion is detected without loading the engine while it works:
 * the harness waits until the remote has seen every workflow's last step, then reads each workflow once
 * (again for the few not yet ended). The end time is the engines' own completion stamp, so the read-back
 * adds nothing to the wall time; its CPU is measured by a second identical pass and subtracted.
 */
export async function throughput(ctx: BenchContext, engine: Engine, run: ThroughputRun): Promise<ThroughputFigures> {
  const { tag, concurrency, timeoutMs, probe } = run;
  const progress = watchRemote(ctx.remote, `${ctx.runTag}-${tag}-`);
  const pids = engine.workerdPids();
  // A probe (--profile) brackets the load alone: started before the first start request, stopped once the
  // remote has seen every last step, so neither the read-back nor the probe's own stop is in it.
  await probe?.start();
  const cpuBefore = cpuMs(pids);
  const rssBeforeKb = memoryKb(pids).rssKb;
  const stopRss = sampleRss(() => pids);
  const startedAt = now();
  const deadline = Date.now() + timeoutMs;
  try {
    const starts = await startAll(ctx, engine, run, deadline);
    await waitForLastSteps(progress, starts.started.length, deadline);
    // The probe's stop (a profile serialised inside workerd) is not the engine's work: its CPU is taken out.
    const cpuBeforeProbeStop = cpuMs(pids);
    await probe?.stop();
    const probeStopCpuMs = probe ? cpuMs(pids) - cpuBeforeProbeStop : 0;
    const { outcomes, reads, pending } = await readUntilTerminal(engine, starts.started, concurrency, deadline);
    const peakRssKb = stopRss();
    const cpuRun = cpuMs(pids) - cpuBefore - probeStopCpuMs;
    const cpuPerRead = await cpuPerStatusRead(engine, pids, starts.started, concurrency);
    if (pending.length > 0) await cancelAll(engine, pending, concurrency);
    const ended = { outcomes, startedAt, cpuRun, cpuPerRead, reads, peakRssKb, rssBeforeKb };
    return throughputFigures(engine, run, starts, ended);
  } finally {
    stopRss();
    progress.stop();
  }
}

/** The start phase's outcome. */
interface Starts {
  started: string[];
  startsDoneAt: number;
  tally: StartTally;
}

/**
 * Back-pressure (429/503 + Retry-After) is honoured as any client would; a start that still fails counts as
 * failed and must not end the whole run, unless every start failed.
 */
async function startAll(ctx: BenchContext, engine: Engine, { tag, workflows, concurrency, slowFraction = 0 }: ThroughputRun, deadline: number): Promise<Starts> {
  const ids = Array.from({ length: workflows }, (_, index) => idFor(ctx, tag, index));
  const pathFor = slowStepPaths(slowFraction);
  const tally = newStartTally();
  const startedFlags = await mapPool(ids, concurrency, (id, index) =>
    startWithBackPressure(engine, { id, steps: stepsFor(ctx.remote.url, STEPS_PER_WORKFLOW, pathFor(index)), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS }, tally, deadline),
  );
  const started = ids.filter((_, index) => startedFlags[index]);
  const startsDoneAt = now();
  if (started.length === 0) throw new Error(`${engine.label}: every start failed, e.g. ${tally.firstError}`);
  return { started, startsDoneAt, tally };
}

/**
 * Reads every workflow until it has ended (most already have) or the deadline passes; a read that times out
 * is tried again in the next pass. Returns the ended ones' statuses, the reads made (to discount their CPU)
 * and the ids still pending.
 */
export async function readUntilTerminal(engine: Engine, ids: string[], concurrency: number, deadline: number): Promise<{ outcomes: Map<string, WorkflowStatus>; reads: number; pending: string[] }> {
  const outcomes = new Map<string, WorkflowStatus>();
  let reads = 0;
  let pending = ids;
  while (pending.length > 0 && Date.now() < deadline) {
    const statuses = await mapPool(pending, concurrency, async (id) => {
      reads++;
      return [id, await engine.readStatus(id).catch((): WorkflowStatus => ({ state: "no answer", terminal: false, completed: false }))] as const;
    });
    for (const [id, status] of statuses) if (status.terminal) outcomes.set(id, status);
    pending = pending.filter((id) => !outcomes.has(id));
    if (pending.length > 0) await sleep(100);
  }
  return { outcomes, reads, pending };
}

/** What the run measured once its workflows ended. */
interface Ended {
  outcomes: Map<string, WorkflowStatus>;
  startedAt: number;
  cpuRun: number;
  cpuPerRead: number;
  reads: number;
  peakRssKb: number;
  rssBeforeKb: number;
}

function throughputFigures(engine: Engine, { tag, workflows }: ThroughputRun, { started, startsDoneAt, tally }: Starts, ended: Ended): ThroughputFigures {
  const { outcomes, startedAt, cpuRun, cpuPerRead, reads, peakRssKb, rssBeforeKb } = ended;
  const completed = [...outcomes.values()].filter((status) => status.completed);
  if (completed.length === 0) throw new Error(`${engine.label}: no workflow of ${tag} completed`);
  const wallMs = Math.max(...completed.map((status) => status.endedAt ?? 0)) - startedAt;
  const steps = completed.length * STEPS_PER_WORKFLOW;
  return {
    workflows,
    completed: completed.length,
    notCompleted: workflows - completed.length,
    startFailures: workflows - started.length,
    backPressureAnswers: tally.backPressureAnswers,
    workflowsPerSec: completed.length / (wallMs / 1000),
    stepsPerSec: steps / (wallMs / 1000),
    wallS: wallMs / 1000,
    startPhaseS: (startsDoneAt - startedAt) / 1000,
    cpuMsPerStep: steps > 0 ? Math.max(0, cpuRun - cpuPerRead * reads) / steps : undefined,
    cpuMsPerStatusRead: cpuPerRead,
    peakRssMb: peakRssKb / 1024,
    rssGrowthMb: (peakRssKb - rssBeforeKb) / 1024,
  };
}
