// Which measurements a run makes: the cases the options ask for, in the order they run, each with what it
// measures in one repeat and on which engines (and repeats) it applies, so nothing is waited for or started
// for a case an engine lacks.
import { resolve } from "node:path";
import type { BenchOptions } from "./args.ts";
import { bill } from "./bill/bill-case.ts";
import { rows } from "./bill/rows-case.ts";
import { burst } from "./burst.ts";
import { detection, latency, mixed, retry, supervisor } from "./cases.ts";
import type { Engine } from "./engines/engine.ts";
import { canProfile } from "./engines/engine.ts";
import { fanOut } from "./fan-out.ts";
import { log } from "./log.ts";
import { pool } from "./pool.ts";
import { loadProfiler, profilePath, saveProfile } from "./profiling.ts";
import type { ProfiledMeasurement, Probe } from "./profiling.ts";
import type { Outcome } from "./results.ts";
import { throughput } from "./throughput.ts";
import type { ThroughputFigures } from "./throughput.ts";
import { STEPS_PER_WORKFLOW } from "./workload.ts";
import type { BenchContext } from "./workload.ts";

export interface PlannedCase {
  name: string;
  /** One repeat's figures. */
  run(ctx: BenchContext, engine: Engine, rep: number): Promise<Outcome>;
  /** Whether the engine has the case in that repeat. */
  applies(engine: Engine, rep: number): boolean;
}

const always = (): boolean => true;

/** The bound of a load case: a minute, plus per step 60 ms (200 ms with slow steps). */
const timeoutFor = (workflows: number, slow = false): number => 60_000 + workflows * STEPS_PER_WORKFLOW * (slow ? 200 : 60);

/** The cases the options ask for, in the order they run. */
export function plannedCases(options: BenchOptions, repo: string): PlannedCase[] {
  const wanted = (name: BenchOptions["cases"][number]): boolean => options.cases.includes(name);
  return [
    ...(wanted("throughput") ? throughputCases(options, repo) : []),
    ...(wanted("latency") ? [latencyCase(options)] : []),
    ...(wanted("retry") ? [retryCase(options)] : []),
    ...(wanted("detection") ? [detectionCase(options)] : []),
    ...(wanted("supervisor") ? [supervisorCase(options)] : []),
    ...(wanted("mixed") ? [mixedCase(options)] : []),
    ...(wanted("fanout") ? fanOutCases(options) : []),
    ...(wanted("pool") ? [poolCase(options)] : []),
    ...(wanted("bill") ? [billCase(options)] : []),
    ...(wanted("rows") ? [rowsCase(options)] : []),
    ...(wanted("burst") ? burstCases(options) : []),
  ];
}

function throughputCases(options: BenchOptions, repo: string): PlannedCase[] {
  const several = options.throughputSizes.length * options.repeat > 1;
  return options.throughputSizes.map((workflows) => {
    const name = `throughput-${workflows}`;
    return {
      name,
      run: (ctx, engine, rep) =>
        withProfile(options, repo, engine, { caseName: name, rep, several }, (probe) =>
          throughput(ctx, engine, { tag: `t${workflows}-${rep}`, workflows, concurrency: options.concurrency, timeoutMs: timeoutFor(workflows), probe })),
      applies: always,
    };
  });
}

function latencyCase(options: BenchOptions): PlannedCase {
  return { name: "latency", run: (ctx, engine, rep) => latency(ctx, engine, { tag: `lat-${rep}`, runs: options.latencyRuns }), applies: always };
}

function retryCase(options: BenchOptions): PlannedCase {
  return { name: "retry", run: (ctx, engine, rep) => retry(ctx, engine, { tag: `retry-${rep}`, samples: options.retrySamples }), applies: always };
}

/** Each sample takes over a second, so the samples are spread over the repeats rather than multiplied. */
function detectionCase(options: BenchOptions): PlannedCase {
  return {
    name: "detection",
    run: (ctx, engine, rep) => detection(ctx, engine, { tag: `det-${rep}`, samples: Math.ceil(options.detectionSamples / options.repeat) }),
    applies: (engine) => engine.supports.detection,
  };
}

/** Counts of storage operations, not timings: one repeat is enough (later ones would only repeat them). */
function supervisorCase(options: BenchOptions): PlannedCase {
  return {
    name: "supervisor",
    run: (ctx, engine, rep) => supervisor(ctx, engine, { tag: `sup-${rep}`, workflows: options.supervisorWorkflows, idleSeconds: options.idleSeconds }),
    applies: (engine, rep) => engine.supports.supervisor && rep === 1,
  };
}

function mixedCase(options: BenchOptions): PlannedCase {
  return {
    name: "mixed",
    run: (ctx, engine, rep) =>
      mixed(ctx, engine, { tag: `mix-${rep}`, workflows: options.mixedSize, concurrency: options.concurrency, timeoutMs: timeoutFor(options.mixedSize, true) }),
    applies: always,
  };
}

/** The bound of one fan-out run: a minute, plus 60 ms per item (as throughput's per step), unless --fanout-timeout says otherwise. */
export const fanOutTimeoutMs = (items: number, timeoutS: number | undefined): number => (timeoutS !== undefined ? timeoutS * 1000 : 60_000 + items * 60);

/** One workflow per size, on every engine that has the case, --fanout-repeat times. */
function fanOutCases(options: BenchOptions): PlannedCase[] {
  return options.fanOutSizes.map((items) => ({
    name: `fanout-${items}`,
    run: (ctx, engine, rep) =>
      fanOut(ctx, engine, { tag: `fan${items}-${rep}`, items, maxConcurrency: options.fanOutConcurrency, timeoutMs: fanOutTimeoutMs(items, options.fanOutTimeoutS) }),
    applies: (engine, rep) => engine.fanOut !== undefined && rep <= options.fanOutRepeat,
  }));
}

/** W workflows of worker steps and the single ones beside http steps, on an engine with worker pools; bounded as throughput. */
function poolCase(options: BenchOptions): PlannedCase {
  const workflows = options.poolSize;
  return {
    name: `pool-${workflows}`,
    run: (ctx, engine, rep) =>
      pool(ctx, engine, { tag: `pool${workflows}-${rep}`, workflows, concurrency: options.concurrency, latencyRuns: options.latencyRuns, timeoutMs: timeoutFor(workflows) }),
    applies: (engine) => engine.pool !== undefined,
  };
}

/**
 * Counts more than timings (workerd's CPU per step aside): one repeat. W workflows of each step shape, started at
 * once up to --concurrency; bounded by two minutes plus 200 ms per step (the slow shape's steps take 2 s each).
 */
function billCase(options: BenchOptions): PlannedCase {
  const workflows = options.billSize;
  return {
    name: "bill",
    run: (ctx, engine) => bill(ctx, engine, { tag: "bill", workflows, concurrency: options.concurrency, timeoutMs: 120_000 + timeoutFor(workflows, true) }),
    applies: (_engine, rep) => rep === 1,
  };
}

/** Counts: one repeat, on the engines whose own objects' rows their user pays for. */
function rowsCase(options: BenchOptions): PlannedCase {
  return { name: "rows", run: (ctx, engine) => rows(ctx, engine, { tag: "rows", sizes: options.rowsSizes }), applies: (engine, rep) => rep === 1 && Boolean(engine.supports.rowsBilled) };
}

/**
 * Last: it leaves thousands of objects behind, which would weigh on the other cases' figures. The bound is
 * throughput's (60 ms per step): at the ~66 steps/s of a 2-core machine, 60 ms per workflow would cut a
 * healthy W = 5 000 run short. An engine without burstAtScale runs only the smallest W. With --burst-cap
 * such an engine runs them too, cut off after that many seconds: the curve side by side.
 */
function burstCases(options: BenchOptions): PlannedCase[] {
  const smallest = Math.min(...options.burstSizes);
  const capped = (engine: Engine, workflows: number): boolean => !engine.supports.burstAtScale && workflows !== smallest;
  return options.burstSizes.map((workflows) => ({
    name: `burst-${workflows}`,
    run: (ctx, engine, rep) => {
      const bound = capped(engine, workflows) ? { timeoutMs: (options.burstCapS ?? 0) * 1000, cutOff: true } : { timeoutMs: timeoutFor(workflows) };
      return burst(ctx, engine, { tag: `burst${workflows}-${rep}`, workflows, clients: options.burstClients, ...bound });
    },
    applies: (engine, rep) => rep <= options.burstRepeat && (engine.supports.burstAtScale || workflows === smallest || options.burstCapS !== undefined),
  }));
}

/**
 * One repeat of `measure(probe)`, CPU-profiled when --profile asks and the engine can be (Shepherd): the
 * profile and its summary per executed step are saved, the summary printed, its figures kept in the outcome.
 */
async function withProfile(
  options: BenchOptions,
  repo: string,
  engine: Engine,
  where: ProfiledMeasurement,
  measure: (probe: Probe | undefined) => Promise<ThroughputFigures>,
): Promise<Outcome> {
  if (!options.profile || !canProfile(engine)) return measure(undefined);
  const probe = loadProfiler(engine, { isolates: options.profileIsolates });
  await probe.connect();
  let outcome: ThroughputFigures;
  try {
    outcome = await measure(probe);
  } finally {
    // A measurement that failed before the probe's stop leaves its sessions open.
    if (probe.profiles.length === 0) probe.abandon();
  }
  const file = profilePath(resolve(repo, options.profile), where);
  const steps = outcome.completed * STEPS_PER_WORKFLOW;
  const title = `${engine.label} ${where.caseName}, repeat ${where.rep}`;
  const { figures, markdown } = saveProfile(probe, { file, appDir: engine.appDir, steps, repo, title });
  log("error" in figures ? `${engine.label}: no profile: ${figures.error}` : `${engine.label}: profile ${figures.file}\n\n${markdown}\n`);
  return { ...outcome, profile: figures };
}
