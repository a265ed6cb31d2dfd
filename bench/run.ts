// `npm run bench`: Shepherd against Cloudflare Workflows and the floor (the least a durable step can cost on this
// runtime) on this machine, all traffic on 127.0.0.1.
//
// One run: start the remote service (in this process) and each engine under `wrangler dev` from a snapshot,
// then run every case `--repeat` times on each engine, one engine at a time (never both under load at once,
// so their figures do not interfere; see runAll for the order). Print one table of medians, write
// bench/results/*.json and docs/performance.md.
// See `npm run bench -- --help` and docs/performance.md ("How it is measured").
//
// What is the bench's own is in bench/lib/: args.ts (flags), plan.ts (which cases run where) and measure.ts
// (how the run goes through them), workload.ts, cases.ts, throughput.ts, burst.ts, fan-out.ts and
// load-phases.ts (the measurements), engines/ (Shepherd and the Workflows baseline behind one adapter),
// bill/ (the bill case, what a step costs on Cloudflare's price list, and the rows case, where its rows written go;
// docs/cost.md), remote.ts (the remote's paths), load.ts and proc-readings.ts (other processes' load; workerd CPU and
// memory), results.ts, report.ts, fan-out-report.ts and figures.ts (what is recorded; the tables), profiling.ts and what it uses (--profile: a CPU profile of
// Shepherd's isolate and its summary).
// What it shares with chaos is in scripts/lib/: process groups and clean-up, the project snapshot and
// `wrangler dev`, flags, ports, the fake remote's server, waiting, statistics, JSON requests and files.
/* global process, console, URL */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { readCommandLine } from "../scripts/lib/cli.ts";
import { errorMessage, stringField } from "../scripts/lib/json.ts";
import { writeJson } from "../scripts/lib/output-files.ts";
import { assertPortsFree } from "../scripts/lib/ports.ts";
import { atInterrupt, installCleanup } from "../scripts/lib/process-groups.ts";
import { nodeForWrangler } from "../scripts/lib/wrangler-dev.ts";
import { parseOptions, PORT_RANGE, USAGE } from "./lib/args.ts";
import type { BenchOptions } from "./lib/args.ts";
import type { Engine, EngineName } from "./lib/engines/engine.ts";
import { floorEngine } from "./lib/engines/floor.ts";
import { shepherdEngine } from "./lib/engines/shepherd.ts";
import { workflowsEngine } from "./lib/engines/workflows.ts";
import { renderCost, writeCostDoc } from "./lib/bill/cost-doc.ts";
import { began, log } from "./lib/log.ts";
import { runAll } from "./lib/measure.ts";
import { plannedCases } from "./lib/plan.ts";
import { startRemote } from "./lib/remote.ts";
import { renderErrors, renderTables, writePerformanceDoc } from "./lib/report.ts";
import type { Results, RunMeta } from "./lib/results.ts";
import type { BenchContext } from "./lib/workload.ts";

const repo = fileURLToPath(new URL("..", import.meta.url));

/** The versions the figures were measured with. */
function versions(nodeBin: string): RunMeta["versions"] {
  const read = (command: string, args: string[]): string => {
    try {
      return execFileSync(command, args, { encoding: "utf8" }).trim();
    } catch {
      return "unknown";
    }
  };
  return {
    node: read(nodeBin, ["--version"]).replace(/^v/, ""),
    wrangler: String(stringField(JSON.parse(readFileSync(join(repo, "node_modules", "wrangler", "package.json"), "utf8")), "version")),
    workerd: read(join(repo, "node_modules", ".bin", "workerd"), ["--version"]).replace(/^workerd\s+/, ""),
  };
}

/** The run's circumstances, recorded with its figures. */
function runMeta(options: BenchOptions): RunMeta {
  return {
    date: new Date().toISOString(),
    cores: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGb: Math.round(totalmem() / 2 ** 30),
    versions: versions(nodeForWrangler(repo)),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
    options,
  };
}

/** The remote, Shepherd (and its inspector on the next port), Workflows (and its inspector), the floor (and its inspector). */
const benchPorts = (base: number) => ({ remote: base, shepherd: base + 1, workflows: base + 3, floor: base + 5 });

/**
 * Every case on the engines the options name, the remote running meanwhile. Returns whether an engine could
 * not start (or restart): its cases so far stay, the run reports the rest as missing.
 */
async function measureEngines(options: BenchOptions, tmp: string, results: Results): Promise<boolean> {
  const ports = benchPorts(options.portBase);
  log(`temp dir ${tmp}; remote on 127.0.0.1:${ports.remote}`);
  const remote = await startRemote(ports.remote);
  const ctx: BenchContext = { remote, runTag: `b${Date.now().toString(36)}` };
  try {
    const shepherd = shepherdEngine({ repo, tmp, port: ports.shepherd, inspectorPort: ports.shepherd + 1, source: options.source, verbose: options.verbose });
    results.meta.shepherdSource = shepherd.source;
    const all: Record<EngineName, Engine> = {
      shepherd,
      workflows: workflowsEngine({ repo, tmp, port: ports.workflows, inspectorPort: ports.workflows + 1, verbose: options.verbose }),
      floor: floorEngine({ repo, tmp, port: ports.floor, inspectorPort: ports.floor + 1, verbose: options.verbose }),
    };
    const engines = options.engines.map((name) => all[name]);
    try {
      await runAll(engines, ctx, options, results, plannedCases(options, repo));
      return false;
    } catch (error) {
      log(errorMessage(error));
      results.error = errorMessage(error);
      return true;
    }
  } finally {
    await remote.close();
  }
}

/** Prints the tables and writes the results (and docs/performance.md and docs/cost.md when asked); returns whether a case failed. */
function report(results: Results, options: BenchOptions): boolean {
  results.meta.durationMin = (Date.now() - began) / 60_000;
  const table = renderTables(results, options);
  const cost = renderCost(results, options);
  const errors = renderErrors(results);
  console.log(`\n${table}\n`);
  if (cost) console.log(`${cost}\n`);
  if (errors) console.log(`Cases that failed:\n${errors}\n`);
  const out = resolve(repo, options.out);
  writeJson(out, results);
  log(`results: ${out}`);
  if (options.writeDocs) {
    writePerformanceDoc(join(repo, "docs", "performance.md"), results, options, table, errors);
    log("table written to docs/performance.md");
    if (cost) {
      writeCostDoc(join(repo, "docs", "cost.md"), results, options, cost);
      log("bill written to docs/cost.md");
    }
  }
  return errors !== "";
}

async function main(): Promise<void> {
  const line = readCommandLine(process.argv.slice(2), { tool: "bench", usage: USAGE, parse: parseOptions });
  if (line.options === undefined) {
    process.exitCode = line.exitCode;
    return;
  }
  const options = line.options;
  installCleanup("bench");
  const ports = benchPorts(options.portBase);
  // Only the engines this run starts need their ports (each its own and its inspector's, the next one).
  const used = [ports.remote, ...options.engines.flatMap((engine) => [ports[engine], ports[engine] + 1])];
  await assertPortsFree(used, { tool: "bench", range: PORT_RANGE });
  const tmp = mkdtempSync(join(tmpdir(), "shepherd-bench-"));
  // Interrupted, the run has nothing worth keeping unless asked (as chaos does with its sandbox).
  if (!options.keepTmp) atInterrupt(() => rmSync(tmp, { recursive: true, force: true }));
  const results: Results = { meta: runMeta(options), engines: {} };
  const engineFailed = await measureEngines(options, tmp, results);
  const caseFailed = report(results, options);
  const failed = engineFailed || caseFailed;
  if (options.keepTmp || failed) log(`kept ${tmp} (snapshots, state, wrangler logs)`);
  else rmSync(tmp, { recursive: true, force: true });
  process.exitCode = failed ? 1 : 0;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
