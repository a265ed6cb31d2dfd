// Command-line options of `npm run bench -- [options]`.
import { parseArgs } from "node:util";

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
  --burst-sizes 1000,5000 burst workflow counts W (default 1000,5000,10000; --quick 300); Workflows runs only
                          the smallest (it cannot finish the large ones in reasonable time)
  --burst-clients N       concurrent clients starting the burst, each honouring 429/503 Retry-After (default 32)
  --idle-seconds S        how long the idle supervisor is watched (default 20)
  --quiet-wait S          before each measurement, wait up to S s for other processes to use < 25 % of a core
                          (default 60; at most 4 min of waiting in a whole run)
  --order interleaved|sequential
                          interleaved (default): both engines up, alternated repeat by repeat, so outside load
                          falls on both alike; sequential: all of one engine, stopped, then the other
  --source worktree|head  Shepherd from the working tree (default) or from the last commit
  --docs / --no-docs      write docs/performance.md (default: yes, except with --quick)
  --out FILE              results JSON (default bench/results/latest.json)
  --keep-tmp              keep the temp dir (snapshots, state, wrangler logs)
  --verbose               wrangler's per-request logs into the temp dir's logs
  --port-base P           first of the 5 ports used (default 8800: remote, Shepherd, its inspector, Workflows, its inspector)
`;

const list = (text) => text.split(",").map((item) => item.trim()).filter(Boolean);
const int = (text, name) => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer (got ${text})`);
  return value;
};

export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean" },
      repeat: { type: "string" },
      cases: { type: "string" },
      engines: { type: "string" },
      sizes: { type: "string" },
      concurrency: { type: "string" },
      "latency-runs": { type: "string" },
      "retry-samples": { type: "string" },
      "detection-samples": { type: "string" },
      "mixed-size": { type: "string" },
      "burst-sizes": { type: "string" },
      "burst-clients": { type: "string" },
      "idle-seconds": { type: "string" },
      "quiet-wait": { type: "string" },
      order: { type: "string" },
      source: { type: "string" },
      docs: { type: "boolean" },
      "no-docs": { type: "boolean" },
      out: { type: "string" },
      "keep-tmp": { type: "boolean" },
      verbose: { type: "boolean" },
      "port-base": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const quick = Boolean(values.quick);
  const pick = (name, full, small, parse = (v) => int(v, name)) => (values[name] !== undefined ? parse(values[name]) : quick ? small : full);
  const options = {
    help: Boolean(values.help),
    quick,
    repeat: pick("repeat", 3, 1),
    cases: values.cases ? list(values.cases) : ALL_CASES,
    engines: values.engines ? list(values.engines) : ALL_ENGINES,
    throughputSizes: pick("sizes", [200, 1000], [50], (v) => list(v).map((n) => int(n, "sizes"))),
    concurrency: pick("concurrency", 50, 20),
    latencyRuns: pick("latency-runs", 20, 5),
    retrySamples: pick("retry-samples", 5, 2),
    detectionSamples: pick("detection-samples", 20, 3),
    mixedSize: pick("mixed-size", 50, 20),
    burstSizes: pick("burst-sizes", [1000, 5000, 10000], [300], (v) => list(v).map((n) => int(n, "burst-sizes"))),
    burstClients: pick("burst-clients", 32, 32),
    idleSeconds: pick("idle-seconds", 20, 5),
    supervisorWorkflows: quick ? 5 : 20,
    quietWaitS: pick("quiet-wait", 60, 5),
    order: values.order ?? "interleaved",
    source: values.source ?? "worktree",
    writeDocs: values["no-docs"] ? false : (values.docs ?? !quick),
    out: values.out ?? (quick ? "bench/results/quick.json" : "bench/results/latest.json"),
    keepTmp: Boolean(values["keep-tmp"]),
    verbose: Boolean(values.verbose),
    portBase: pick("port-base", 8800, 8800),
  };
  for (const name of options.cases) if (!ALL_CASES.includes(name)) throw new Error(`unknown case ${name}; cases: ${ALL_CASES.join(", ")}`);
  for (const name of options.engines) if (!ALL_ENGINES.includes(name)) throw new Error(`unknown engine ${name}; engines: ${ALL_ENGINES.join(", ")}`);
  if (!["interleaved", "sequential"].includes(options.order)) throw new Error("--order must be interleaved or sequential");
  if (!["worktree", "head"].includes(options.source)) throw new Error("--source must be worktree or head");
  // The bench owns ports 8800-8809 only; other sessions on this machine use the ones around them.
  if (options.portBase < 8800 || options.portBase + 4 > 8809) throw new Error("--port-base must keep all 5 ports within 8800-8809");
  return options;
}
