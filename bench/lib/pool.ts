// The pool case: steps done by the user's own workers, which pull them. W workflows of five `worker` steps,
// started as the throughput case starts its workflows, worked through by eight workers in this process
// (pool-workers.ts): how many tasks per second, at what workerd CPU per step. Then single workflows one at a
// time, five worker steps against five http steps to the remote, alternated: what a step costs in latency when
// a worker pulls it instead of an agent calling out. Only an engine with a pull model has the case (Shepherd).
import { mapPool } from "../../scripts/lib/async.ts";
import { percentile } from "../../scripts/lib/stats.ts";
import type { Engine, HistoryEvent, PoolApi, PoolTask, WorkflowStatus } from "./engines/engine.ts";
import { cancelAll, cpuPerStatusRead, waitForLastSteps } from "./load-phases.ts";
import type { RemoteProgress } from "./load-phases.ts";
import { startWorkers } from "./pool-workers.ts";
import type { WorkerTally } from "./pool-workers.ts";
import { cpuMs } from "./proc-readings.ts";
import { now } from "./remote.ts";
import type { Samples } from "./results.ts";
import { newStartTally, startWithBackPressure } from "./starts.ts";
import type { StartTally } from "./starts.ts";
import { readUntilTerminal } from "./throughput.ts";
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS, idFor, pollUntilTerminal, STEPS_PER_WORKFLOW, stepsFor } from "./workload.ts";
import type { BenchContext } from "./workload.ts";

/** The workers in the bench process, each poll's waitMs and max: the issue's set-up. */
export const POOL_WORKERS = 8;
export const POLL_WAIT_MS = 20_000;
export const POLL_MAX_TASKS = 4;

export interface PoolRun {
  tag: string;
  workflows: number;
  /** Starts in flight at once, as in the throughput case. */
  concurrency: number;
  /** Pairs of single workflows (one of worker steps, one of http steps) for the latency figures. */
  latencyRuns: number;
  timeoutMs: number;
}

export type PoolFigures = {
  workflows: number;
  completed: number;
  notCompleted: number;
  startFailures: number;
  backPressureAnswers: number;
  /** Steps of completed workflows per second of wall time (first start → the last completion stamp). */
  tasksPerSec: number;
  wallS: number;
  startPhaseS: number;
  cpuMsPerStep: number | undefined;
  cpuMsPerStatusRead: number;
  /** The workers' polls per task they took: 1 / max at best, more when polls came back with fewer or none. */
  pollsPerTask: number | undefined;
  pollErrors: number;
  completeErrors: number;
  workerError: string | undefined;
  /** Per step, step_scheduled → step_succeeded (the object's clock), over this repeat's single workflows. */
  workerStepP50Ms: number | undefined;
  httpStepP50Ms: number | undefined;
  addedMsPerStep: number | undefined;
  samples: Samples;
};

/** One repeat: the load, then the single workflows, the same eight workers polling throughout. */
export async function pool(ctx: BenchContext, engine: Engine, run: PoolRun): Promise<PoolFigures> {
  const api = engine.pool;
  if (!api) throw new Error(`${engine.label} has no worker pools`);
  const poolName = `${ctx.runTag}-${run.tag}`;
  // The load's ids are idFor(ctx, `${tag}-load`, index): the single workflows' tasks are not its progress.
  const progress = watchTasks(`${ctx.runTag}-${run.tag}-load-`);
  const workers = startWorkers(api, { pool: poolName, workers: POOL_WORKERS, waitMs: POLL_WAIT_MS, max: POLL_MAX_TASKS }, progress.record);
  try {
    const load = await poolLoad(ctx, engine, api, { run, poolName, progress });
    const samples = await poolLatency(ctx, engine, api, { tag: run.tag, runs: run.latencyRuns, poolName });
    return poolFigures(run, { ...load, samples, tally: workers.tally });
  } finally {
    progress.stop();
    await workers.stop();
  }
}

/** The load's tasks as the workers report them, in the shape the throughput case follows the remote in. */
export function watchTasks(prefix: string): RemoteProgress & { record(task: PoolTask): void } {
  const lastStep = `s${STEPS_PER_WORKFLOW}`;
  let stopped = false;
  const progress = {
    stepsSeen: new Set<string>(),
    finished: new Set<string>(),
    lastProgressAt: Date.now(),
    stop: () => void (stopped = true),
    record(task: PoolTask): void {
      if (stopped || !task.workflowId.startsWith(prefix)) return;
      progress.lastProgressAt = Date.now();
      progress.stepsSeen.add(`${task.workflowId}:${task.stepId}`);
      if (task.stepId === lastStep) progress.finished.add(task.workflowId);
    },
  };
  return progress;
}

/** What the load measured, for poolFigures. */
export interface LoadMeasured {
  outcomes: Map<string, WorkflowStatus>;
  started: number;
  startTally: StartTally;
  startedAt: number;
  startsDoneAt: number;
  /** workerd CPU from before the first start until every workflow was read back ended. */
  cpuRun: number;
  cpuPerRead: number;
  reads: number;
}

/**
 * W workflows started with bounded concurrency (429/503 honoured), worked through by the workers. The harness
 * does not read the engine meanwhile: it waits until the workers completed every workflow's last step, then
 * reads each one for its completion stamp; that read-back's CPU is measured again and taken out.
 */
async function poolLoad(ctx: BenchContext, engine: Engine, api: PoolApi, { run, poolName, progress }: { run: PoolRun; poolName: string; progress: RemoteProgress }): Promise<LoadMeasured> {
  const pids = engine.workerdPids();
  const cpuBefore = cpuMs(pids);
  const startedAt = now();
  const deadline = Date.now() + run.timeoutMs;
  const ids = Array.from({ length: run.workflows }, (_, index) => idFor(ctx, `${run.tag}-load`, index));
  const startTally = newStartTally();
  const starter = { startWorkflow: api.startWorkflow, readStatus: engine.readStatus };
  const flags = await mapPool(ids, run.concurrency, (id) =>
    startWithBackPressure(starter, { id, pool: poolName, steps: STEPS_PER_WORKFLOW, retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS }, startTally, deadline));
  const startsDoneAt = now();
  const started = ids.filter((_, index) => flags[index]);
  if (started.length === 0) throw new Error(`${engine.label}: every start failed, e.g. ${startTally.firstError}`);
  await waitForLastSteps(progress, started.length, deadline);
  const { outcomes, reads, pending } = await readUntilTerminal(engine, started, run.concurrency, deadline);
  const cpuRun = cpuMs(pids) - cpuBefore;
  const cpuPerRead = await cpuPerStatusRead(engine, pids, started, run.concurrency);
  if (pending.length > 0) await cancelAll(engine, pending, run.concurrency);
  return { outcomes, started: started.length, startTally, startedAt, startsDoneAt, cpuRun, cpuPerRead, reads };
}

type Kind = "worker" | "http";

/**
 * Pairs of single workflows, one at a time: five worker steps and five http steps to the remote, in turn (the
 * worker one first in even runs), so load from elsewhere falls on both alike. Samples per step (see
 * stepTimes) and per workflow (start request → the completion stamp).
 */
async function poolLatency(ctx: BenchContext, engine: Engine, api: PoolApi, { tag, runs, poolName }: { tag: string; runs: number; poolName: string }): Promise<Samples> {
  const samples: Samples = { workerStep: [], httpStep: [], workerClaimed: [], workerWorkflow: [], httpWorkflow: [] };
  for (let run = 0; run < runs; run++) {
    const kinds: Kind[] = run % 2 === 0 ? ["worker", "http"] : ["http", "worker"];
    for (const kind of kinds) {
      const id = idFor(ctx, `${tag}-${kind}`, run);
      const sentAt = now();
      const start = kind === "worker"
        ? await api.startWorkflow({ id, pool: poolName, steps: STEPS_PER_WORKFLOW, retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS })
        : await engine.startWorkflow({ id, steps: stepsFor(ctx.remote.url, STEPS_PER_WORKFLOW), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS });
      if (!start.ok) throw new Error(`${engine.label}: start of ${id} failed: ${start.status} ${start.error}`);
      const { status } = await pollUntilTerminal(engine, id, 30_000);
      if (!status.completed) throw new Error(`${engine.label}: ${kind} workflow ${id} ended ${status.state}`);
      if (status.endedAt !== undefined) samples[`${kind}Workflow`]?.push(status.endedAt - sentAt);
      const times = stepTimes(engine.history ? await engine.history(id) : []);
      samples[`${kind}Step`]?.push(...times.total);
      if (kind === "worker") samples.workerClaimed?.push(...times.claimed);
    }
  }
  return samples;
}

/**
 * Each step's first attempt from the history (the object's clock): total = step_scheduled → step_succeeded,
 * claimed = step_scheduled → step_started (for a worker step: offered to the pool, a poll woken, the claim).
 * A step missing one of its events gives no sample.
 */
export function stepTimes(events: readonly HistoryEvent[]): { total: number[]; claimed: number[] } {
  const at = (type: string, stepId: string): number | undefined =>
    events.find((event) => event.type === type && event.stepId === stepId && (event.attempt === undefined || event.attempt === 1))?.at;
  const total: number[] = [];
  const claimed: number[] = [];
  for (let index = 1; index <= STEPS_PER_WORKFLOW; index++) {
    const scheduled = at("step_scheduled", `s${index}`);
    const started = at("step_started", `s${index}`);
    const succeeded = at("step_succeeded", `s${index}`);
    if (scheduled === undefined) continue;
    if (succeeded !== undefined) total.push(succeeded - scheduled);
    if (started !== undefined) claimed.push(started - scheduled);
  }
  return { total, claimed };
}

/** The figures of one repeat from what it measured. */
export function poolFigures({ tag, workflows }: PoolRun, measured: LoadMeasured & { samples: Samples; tally: WorkerTally }): PoolFigures {
  const { outcomes, startedAt, cpuRun, cpuPerRead, reads, samples, tally } = measured;
  const completed = [...outcomes.values()].filter((status) => status.completed);
  if (completed.length === 0) throw new Error(`no workflow of ${tag} completed${tally.firstError ? `; the workers' first error: ${tally.firstError}` : ""}`);
  const wallMs = Math.max(...completed.map((status) => status.endedAt ?? 0)) - startedAt;
  const steps = completed.length * STEPS_PER_WORKFLOW;
  const workerStepP50Ms = percentile(samples.workerStep ?? [], 50);
  const httpStepP50Ms = percentile(samples.httpStep ?? [], 50);
  return {
    workflows,
    completed: completed.length,
    notCompleted: workflows - completed.length,
    startFailures: workflows - measured.started,
    backPressureAnswers: measured.startTally.backPressureAnswers,
    tasksPerSec: steps / (wallMs / 1000),
    wallS: wallMs / 1000,
    startPhaseS: (measured.startsDoneAt - startedAt) / 1000,
    cpuMsPerStep: steps > 0 ? Math.max(0, cpuRun - cpuPerRead * reads) / steps : undefined,
    cpuMsPerStatusRead: cpuPerRead,
    pollsPerTask: tally.tasks > 0 ? tally.polls / tally.tasks : undefined,
    pollErrors: tally.pollErrors,
    completeErrors: tally.completeErrors,
    workerError: tally.firstError,
    workerStepP50Ms,
    httpStepP50Ms,
    addedMsPerStep: workerStepP50Ms !== undefined && httpStepP50Ms !== undefined ? workerStepP50Ms - httpStepP50Ms : undefined,
    samples,
  };
}
