// Command-line options of `npm run bench -- [options]`: the flags, their defaults and the --quick preset.
// Reading and checking them is scripts/lib/cli.ts's, as for chaos.
import { flagSpec, integer, list, oneOf, readFlags } from "../../scripts/lib/cli.ts";
import { checkPortBase } from "../../scripts/lib/ports.ts";
import type { PortRange } from "../../scripts/lib/ports.ts";
import type { SnapshotSource } from "../../scripts/lib/wrangler-dev.ts";
import type { EngineName } from "./engines/engine.ts";

export const ALL_CASES = ["throughput", "latency", "retry", "detection", "supervisor", "mixed", "fanout", "pool", "bill", "rows", "burst"] as const;
export const ALL_ENGINES: readonly EngineName[] = ["shepherd", "workflows", "floor"];

export type CaseName = (typeof ALL_CASES)[number];

export const USAGE = `npm run bench -- [options]

  --quick                 small sizes, 1 repeat (development); results to bench/results/quick.json, docs untouched
  --repeat N              repeats of every figure; the table shows medians (default 3)
  --cases a,b             of ${ALL_CASES.join(", ")} (default all)
  --engines a,b           of ${ALL_ENGINES.join(", ")} (default all; the floor is the least a durable step
                          can cost on this runtime, bench/floor)
  --sizes 200,1000        throughput workflow counts W (default 200,1000)
  --concurrency N         starts in flight at once (default 50)
  --latency-runs N        sequential workflows per latency repeat (default 20; percentiles pool all repeats)
  --retry-samples N       per retry repeat (default 5)
  --detection-samples N   in all, spread over the repeats (default 20)
  --mixed-size W          workflows in the mixed-load case (default 50)
  --burst-sizes 1000,5000 burst workflow counts W (default 1000,2000,5000,10000; --quick 300)
  --burst-cap S           an engine that cannot finish the large burst sizes (Workflows) runs them cut off S s
                          after its first start: the W curve side by side (default 180; --quick and 0: it runs
                          only the smallest)
  --burst-repeat N        repeats of each burst size (default 1, one run per point of the curve; --repeat N
                          given: N)
  --burst-clients N       concurrent clients starting the burst, each honouring 429/503 Retry-After (default 32)
  --fanout-sizes 1000,10000
                          fan-out item counts N: one workflow over N items (default 1000,10000; --quick 200)
  --fanout-concurrency N  Shepherd's map maxConcurrency (default 100; Workflows' Promise.all has no bound)
  --fanout-repeat N       repeats of each fan-out size (default 1; --repeat N given: N)
  --fanout-timeout S      bound of one fan-out run (default 60 s + 60 ms per item); past it: "not ended"
  --pool-size W           workflows of 5 worker steps in the pool case, pulled by 8 workers in the bench (default
                          1000; --quick 100); its single workflows are --latency-runs pairs (worker, http)
  --bill-size W           workflows of 5 steps per step shape in the bill case (default 20; --quick 5): a remote
                          that answers at once, one that takes 2 s, one that answers 202 and calls back
  --rows-sizes 1,5,50     steps per workflow in the rows case: SQLite rows written by statement (default 1,5,50)
  --idle-seconds S        how long the idle supervisor is watched (default 20)
  --fresh                 restart each engine's wrangler dev (same state) before every measurement but its first,
                          so no measurement carries the objects an earlier one left in the runtime's memory
  --quiet-wait S          before each measurement, wait up to S s for other processes to use < 25 % of a core
                          (default 60; at most 4 min of waiting in a whole run)
  --order interleaved|sequential
                          interleaved (default): both engines up, alternated repeat by repeat, so outside load
                          falls on both alike; sequential: all of one engine, stopped, then the other
  --source worktree|head  Shepherd from the working tree (default) or from the last commit
  --docs / --no-docs      write docs/performance.md and docs/cost.md (default: yes, except with --quick)
  --out FILE              results JSON (default bench/results/latest.json; with --profile bench/results/profile.json)
  --profile FILE          a V8 CPU profile of Shepherd's isolate over the load of each throughput measurement,
                          as FILE (a .cpuprofile for DevTools, frames mapped to src/) and its summary per step
                          beside it (.md); FILE gets -<case>-<repeat> when several measurements are profiled.
                          The profiler's cost is in the figures: docs/performance.md is left alone unless --docs
  --profile-isolates      with --profile: every other isolate of the runtime too (the local queues, D1, the
                          entry router, …), for how its CPU splits; their samplers cost about a fifth of a core
  --keep-tmp              keep the temp dir (snapshots, state, wrangler logs)
  --verbose               wrangler's per-request logs into the temp dir's logs
  --port-base P           first of the 7 ports used (default 8800: remote, Shepherd, its inspector, Workflows, its
                          inspector, the floor, its inspector); BENCH_PORTS=low-high in the environment moves the
                          bench's whole range (default 8800-8809), for a machine where another session holds it
`;

/** `low-high` as a port range; undefined for anything else. */
export function portRange(text: string | undefined): PortRange | undefined {
  const match = /^(\d+)-(\d+)$/.exec(text ?? "");
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

/** The bench owns ports 8800-8809 (BENCH_PORTS moves them); other sessions on this machine use the ones around them. */
export const PORT_RANGE: PortRange = portRange(process.env.BENCH_PORTS) ?? [8800, 8809];
/** Remote, Shepherd, its inspector, Workflows, its inspector, the floor, its inspector. */
export const PORT_COUNT = 7;

const FLAGS = flagSpec({
  values: [
    "repeat", "cases", "engines", "sizes", "concurrency", "latency-runs", "retry-samples", "detection-samples", "mixed-size",
    "burst-sizes", "burst-cap", "burst-repeat", "burst-clients",
    "fanout-sizes", "fanout-concurrency", "fanout-repeat", "fanout-timeout", "pool-size", "bill-size", "rows-sizes", "idle-seconds", "quiet-wait", "order", "source", "out", "port-base", "profile",
  ],
  switches: ["quick", "docs", "no-docs", "keep-tmp", "verbose", "profile-isolates", "fresh"],
});

/** A run's options: the flags read, defaults and the --quick preset applied. */
export interface BenchOptions {
  help: boolean;
  quick: boolean;
  repeat: number;
  cases: readonly CaseName[];
  engines: readonly EngineName[];
  throughputSizes: number[];
  concurrency: number;
  latencyRuns: number;
  retrySamples: number;
  detectionSamples: number;
  mixedSize: number;
  burstSizes: number[];
  burstRepeat: number;
  burstClients: number;
  fresh: boolean;
  /** undefined: an engine without burstAtScale runs only the smallest burst size. */
  burstCapS: number | undefined;
  fanOutSizes: number[];
  fanOutConcurrency: number;
  fanOutRepeat: number;
  /** undefined: 60 s + 60 ms per item. */
  fanOutTimeoutS: number | undefined;
  poolSize: number;
  /** Workflows per step shape in the bill case. */
  billSize: number;
  /** Steps per workflow in the rows case. */
  rowsSizes: number[];
  idleSeconds: number;
  supervisorWorkflows: number;
  quietWaitS: number;
  order: "interleaved" | "sequential";
  source: SnapshotSource;
  profile: string | undefined;
  profileIsolates: boolean;
  writeDocs: boolean;
  out: string;
  keepTmp: boolean;
  verbose: boolean;
  portBase: number;
}

type Values = ReturnType<typeof readFlags<typeof FLAGS>>["values"];
type ValueFlag = { [K in keyof Values]-?: Values[K] extends string | undefined ? K : never }[keyof Values];

/** Reads value flags: the flag's value parsed, or the default of a full run, or of --quick. */
function flagReader(values: Values, quick: boolean) {
  const pick = <T>(name: ValueFlag, full: T, small: T, parse: (text: string) => T): T => {
    const text = values[name];
    return text !== undefined ? parse(text) : quick ? small : full;
  };
  const count = (name: ValueFlag, full: number, small: number): number => pick(name, full, small, (text) => integer(text, `--${name}`));
  const sizes = (name: ValueFlag, full: number[], small: number[]): number[] =>
    pick(name, full, small, (text) => list(text).map((n) => integer(n, `--${name}`)));
  return { pick, count, sizes };
}

/** --burst-cap 0 means none. */
const orNone = (seconds: number): number | undefined => (seconds > 0 ? seconds : undefined);

/**
 * The burst curve and the fan-out sizes take minutes each: once per point unless asked for more (their own
 * flag, else --repeat).
 */
function onceUnlessAsked(values: Values, flag: "burst-repeat" | "fanout-repeat"): number {
  const text = values[flag];
  if (text !== undefined) return integer(text, `--${flag}`);
  return values.repeat !== undefined ? integer(values.repeat, "--repeat") : 1;
}

/** A profiled run's figures carry the profiler's cost: they replace neither the page's table nor latest.json. */
function outputOptions(values: Values, quick: boolean): Pick<BenchOptions, "profile" | "profileIsolates" | "writeDocs" | "out"> {
  return {
    profile: values.profile,
    profileIsolates: Boolean(values["profile-isolates"]),
    writeDocs: values["no-docs"] ? false : (values.docs ?? (!quick && !values.profile)),
    out: values.out ?? (quick ? "bench/results/quick.json" : values.profile ? "bench/results/profile.json" : "bench/results/latest.json"),
  };
}

export function parseOptions(argv: string[]): BenchOptions {
  const { values } = readFlags(argv, FLAGS);
  const quick = Boolean(values.quick);
  const { pick, count, sizes } = flagReader(values, quick);
  const options: BenchOptions = {
    help: Boolean(values.help),
    quick,
    repeat: count("repeat", 3, 1),
    cases: values.cases ? list(values.cases).map((name) => oneOf(name, "--cases", ALL_CASES)) : ALL_CASES,
    engines: values.engines ? list(values.engines).map((name) => oneOf(name, "--engines", ALL_ENGINES)) : ALL_ENGINES,
    throughputSizes: sizes("sizes", [200, 1000], [50]),
    concurrency: count("concurrency", 50, 20),
    latencyRuns: count("latency-runs", 20, 5),
    retrySamples: count("retry-samples", 5, 2),
    detectionSamples: count("detection-samples", 20, 3),
    mixedSize: count("mixed-size", 50, 20),
    burstSizes: sizes("burst-sizes", [1000, 2000, 5000, 10000], [300]),
    burstRepeat: onceUnlessAsked(values, "burst-repeat"),
    burstClients: count("burst-clients", 32, 32),
    fresh: Boolean(values.fresh),
    burstCapS: orNone(pick("burst-cap", 180, 0, (text) => integer(text, "--burst-cap", 0))),
    fanOutSizes: sizes("fanout-sizes", [1000, 10000], [200]),
    fanOutConcurrency: count("fanout-concurrency", 100, 100),
    fanOutRepeat: onceUnlessAsked(values, "fanout-repeat"),
    fanOutTimeoutS: values["fanout-timeout"] === undefined ? undefined : integer(values["fanout-timeout"], "--fanout-timeout"),
    poolSize: count("pool-size", 1000, 100),
    billSize: count("bill-size", 20, 5),
    rowsSizes: sizes("rows-sizes", [1, 5, 50], [1, 5, 50]),
    idleSeconds: count("idle-seconds", 20, 5),
    supervisorWorkflows: quick ? 5 : 20,
    quietWaitS: count("quiet-wait", 60, 5),
    order: oneOf(values.order ?? "interleaved", "--order", ["interleaved", "sequential"]),
    source: oneOf(values.source ?? "worktree", "--source", ["worktree", "head"]),
    ...outputOptions(values, quick),
    keepTmp: Boolean(values["keep-tmp"]),
    verbose: Boolean(values.verbose),
    portBase: count("port-base", PORT_RANGE[0], PORT_RANGE[0]),
  };
  checkPortBase(options.portBase, PORT_COUNT, PORT_RANGE);
  if (options.profileIsolates && !options.profile) throw new Error("--profile-isolates needs --profile FILE");
  return options;
}
