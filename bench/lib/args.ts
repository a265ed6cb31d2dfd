// Command-line options of `npm run bench -- [options]`: the flags, their defaults and the --quick preset.
// Reading and checking them is scripts/lib/cli.ts's, as for chaos.
import { flagSpec, integer, list, oneOf, readFlags } from "../../scripts/lib/cli.ts";
import { checkPortBase } from "../../scripts/lib/ports.ts";

export const ALL_CASES = ["throughput", "latency", "retry", "detection", "supervisor", "mixed", "burst"];
export const ALL_ENGINES = ["shepherd", "workflows"];

export const USAGE = `npm run bench -- [options]

  --quick                 small sizes, 1 repeat (development); results to bench/results/quick.json, docs untouched
  --repeat N              repeats of every figure; the table shows medians (default 3)
  --cases a,b             of ${ALL_CASES.join(", ")} (default all)
  --engines a,b           of ${ALL_ENGINES.join(", ")} (default both)
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
  --idle-seconds S        how long the idle supervisor is watched (default 20)
  --fresh                 restart each engine's wrangler dev (same state) before every measurement but its first,
                          so no measurement carries the objects an earlier one left in the runtime's memory
  --quiet-wait S          before each measurement, wait up to S s for other processes to use < 25 % of a core
                          (default 60; at most 4 min of waiting in a whole run)
  --order interleaved|sequential
                          interleaved (default): both engines up, alternated repeat by repeat, so outside load
                          falls on both alike; sequential: all of one engine, stopped, then the other
  --source worktree|head  Shepherd from the working tree (default) or from the last commit
  --docs / --no-docs      write docs/performance.md (default: yes, except with --quick)
  --out FILE              results JSON (default bench/results/latest.json; with --profile bench/results/profile.json)
  --profile FILE          a V8 CPU profile of Shepherd's isolate over the load of each throughput measurement,
                          as FILE (a .cpuprofile for DevTools, frames mapped to src/) and its summary per step
                          beside it (.md); FILE gets -<case>-<repeat> when several measurements are profiled.
                          The profiler's cost is in the figures: docs/performance.md is left alone unless --docs
  --profile-isolates      with --profile: every other isolate of the runtime too (the local queues, D1, the
                          entry router, …), for how its CPU splits; their samplers cost about a fifth of a core
  --keep-tmp              keep the temp dir (snapshots, state, wrangler logs)
  --verbose               wrangler's per-request logs into the temp dir's logs
  --port-base P           first of the 5 ports used (default 8800: remote, Shepherd, its inspector, Workflows, its inspector)
`;

/** The bench owns ports 8800-8809; other sessions on this machine use the ones around them. */
export const PORT_RANGE = [8800, 8809];
/** Remote, Shepherd, its inspector, Workflows, its inspector. */
export const PORT_COUNT = 5;

const FLAGS = flagSpec({
  values: [
    "repeat", "cases", "engines", "sizes", "concurrency", "latency-runs", "retry-samples", "detection-samples", "mixed-size",
    "burst-sizes", "burst-cap", "burst-repeat", "burst-clients", "idle-seconds", "quiet-wait", "order", "source", "out", "port-base", "profile",
  ],
  switches: ["quick", "docs", "no-docs", "keep-tmp", "verbose", "profile-isolates", "fresh"],
});

export function parseOptions(argv) {
  const { values } = readFlags(argv, FLAGS);
  const quick = Boolean(values.quick);
  const pick = (name, full, small, parse = (v) => integer(v, `--${name}`)) => (values[name] !== undefined ? parse(values[name]) : quick ? small : full);
  const sizes = (name) => (v) => list(v).map((n) => integer(n, `--${name}`));
  const options = {
    help: Boolean(values.help),
    quick,
    repeat: pick("repeat", 3, 1),
    cases: values.cases ? list(values.cases).map((name) => oneOf(name, "--cases", ALL_CASES)) : ALL_CASES,
    engines: values.engines ? list(values.engines).map((name) => oneOf(name, "--engines", ALL_ENGINES)) : ALL_ENGINES,
    throughputSizes: pick("sizes", [200, 1000], [50], sizes("sizes")),
    concurrency: pick("concurrency", 50, 20),
    latencyRuns: pick("latency-runs", 20, 5),
    retrySamples: pick("retry-samples", 5, 2),
    detectionSamples: pick("detection-samples", 20, 3),
    mixedSize: pick("mixed-size", 50, 20),
    burstSizes: pick("burst-sizes", [1000, 2000, 5000, 10000], [300], sizes("burst-sizes")),
    // A curve of four sizes, each several minutes long: once per point unless asked for more.
    burstRepeat: values["burst-repeat"] !== undefined ? integer(values["burst-repeat"], "--burst-repeat") : values.repeat !== undefined ? integer(values.repeat, "--repeat") : 1,
    burstClients: pick("burst-clients", 32, 32),
    fresh: Boolean(values.fresh),
    burstCapS: ((cap) => (cap > 0 ? cap : undefined))(pick("burst-cap", 180, 0, (v) => integer(v, "--burst-cap", 0))),
    idleSeconds: pick("idle-seconds", 20, 5),
    supervisorWorkflows: quick ? 5 : 20,
    quietWaitS: pick("quiet-wait", 60, 5),
    order: oneOf(values.order ?? "interleaved", "--order", ["interleaved", "sequential"]),
    source: oneOf(values.source ?? "worktree", "--source", ["worktree", "head"]),
    // A profiled run's figures carry the profiler's cost: they replace neither the page's table nor latest.json.
    profile: values.profile,
    profileIsolates: Boolean(values["profile-isolates"]),
    writeDocs: values["no-docs"] ? false : (values.docs ?? (!quick && !values.profile)),
    out: values.out ?? (quick ? "bench/results/quick.json" : values.profile ? "bench/results/profile.json" : "bench/results/latest.json"),
    keepTmp: Boolean(values["keep-tmp"]),
    verbose: Boolean(values.verbose),
    portBase: pick("port-base", PORT_RANGE[0], PORT_RANGE[0]),
  };
  checkPortBase(options.portBase, PORT_COUNT, PORT_RANGE);
  if (options.profileIsolates && !options.profile) throw new Error("--profile-isolates needs --profile FILE");
  return options;
}
