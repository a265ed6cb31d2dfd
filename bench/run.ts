// `npm run bench`: Shepherd against Cloudflare Workflows on this machine, all traffic on 127.0.0.1.
//
// One run: start the remote service (in this process) and each engine under `wrangler dev` from a snapshot,
// then run every case `--repeat` times on each engine, one engine at a time (never both under load at once,
// so their figures do not interfere; see runAll for the order). Print one table of medians, write
// bench/results/*.json and docs/performance.md.
// See `npm run bench -- --help` and docs/performance.md ("How it is measured").
//
// What is the bench's own is in bench/lib/: args.ts (flags), cases.ts and burst.ts (the measurements),
// engines/ (Shepherd and the Workflows baseline behind one adapter), remote.ts (the remote's paths),
// load.ts and proc-readings.ts (other processes' load; workerd CPU and memory), report.ts (the tables),
// profiling.ts and what it uses (--profile: a CPU profile of Shepherd's isolate and its summary).
// What it shares with chaos is in scripts/lib/: process groups and clean-up, the project snapshot and
// `wrangler dev`, flags, ports, the fake remote's server, waiting, statistics, JSON requests and files.
/* global process, console, URL */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { readCommandLine } from "../scripts/lib/cli.ts";
import { writeJson } from "../scripts/lib/output-files.ts";
import { assertPortsFree } from "../scripts/lib/ports.ts";
import { atInterrupt, installCleanup } from "../scripts/lib/process-groups.ts";
import { nodeForWrangler } from "../scripts/lib/wrangler-dev.ts";
import { parseOptions, PORT_RANGE, USAGE } from "./lib/args.ts";
import { burst } from "./lib/burst.ts";
import * as cases from "./lib/cases.ts";
import { shepherdEngine } from "./lib/engines/shepherd.ts";
import { loadProfiler, profilePath, saveProfile } from "./lib/profiling.ts";
import { workflowsEngine } from "./lib/engines/workflows.ts";
import { waitForQuiet, watchOtherLoad } from "./lib/load.ts";
import { startRemote } from "./lib/remote.ts";
import { renderErrors, renderTables, writePerformanceDoc } from "./lib/report.ts";

const repo = fileURLToPath(new URL("..", import.meta.url));
const began = Date.now();
/** Waiting for other processes to calm down is bounded over the whole run, not only per measurement. */
const quietBudget = { leftMs: 4 * 60_000 };
const log = (message) => console.log(`[bench ${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${message}`);

/**
 * The cases as [name, run, applies?]: run returns one repeat's figures; applies(engine, rep) says whether the
 * engine has that case (and in which repeats), so nothing is waited for or started for a case it lacks.
 */
function plannedCases(options) {
  const plan = [];
  const timeoutFor = (workflows, slow) => 60_000 + workflows * cases.STEPS_PER_WORKFLOW * (slow ? 200 : 60);
  if (options.cases.includes("throughput")) {
    const several = options.throughputSizes.length * options.repeat > 1;
    for (const workflows of options.throughputSizes) {
      const name = `throughput-${workflows}`;
      plan.push([name, (ctx, engine, rep) => withProfile(options, engine, { caseName: name, rep, several }, (probe) =>
        cases.throughput(ctx, engine, { tag: `t${workflows}-${rep}`, workflows, concurrency: options.concurrency, timeoutMs: timeoutFor(workflows), probe }))]);
    }
  }
  if (options.cases.includes("latency")) {
    plan.push(["latency", (ctx, engine, rep) => cases.latency(ctx, engine, { tag: `lat-${rep}`, runs: options.latencyRuns })]);
  }
  if (options.cases.includes("retry")) {
    plan.push(["retry", (ctx, engine, rep) => cases.retry(ctx, engine, { tag: `retry-${rep}`, samples: options.retrySamples })]);
  }
  if (options.cases.includes("detection")) {
    // Each sample takes over a second, so the samples are spread over the repeats rather than multiplied.
    plan.push(["detection", (ctx, engine, rep) =>
      cases.detection(ctx, engine, { tag: `det-${rep}`, samples: Math.ceil(options.detectionSamples / options.repeat) }),
      (engine) => engine.supports.detection]);
  }
  if (options.cases.includes("supervisor")) {
    // Counts of storage operations, not timings: one repeat is enough (later ones would only repeat them).
    plan.push(["supervisor", (ctx, engine, rep) =>
      cases.supervisor(ctx, engine, { tag: `sup-${rep}`, workflows: options.supervisorWorkflows, idleSeconds: options.idleSeconds }),
      (engine, rep) => engine.supports.supervisor && rep === 1]);
  }
  if (options.cases.includes("mixed")) {
    plan.push(["mixed", (ctx, engine, rep) =>
      cases.mixed(ctx, engine, { tag: `mix-${rep}`, workflows: options.mixedSize, concurrency: options.concurrency, timeoutMs: timeoutFor(options.mixedSize, true) })]);
  }
  if (options.cases.includes("burst")) {
    // Last: it leaves thousands of objects behind, which would weigh on the other cases' figures. The bound
    // is throughput's (60 ms per step): at the ~66 steps/s of a 2-core machine, 60 ms per workflow would cut
    // a healthy W = 5 000 run short. An engine without burstAtScale runs only the smallest W.
    // With --burst-cap such an engine runs them too, cut off after that many seconds: the curve side by side.
    const smallest = Math.min(...options.burstSizes);
    const capped = (engine, workflows) => !engine.supports.burstAtScale && workflows !== smallest;
    for (const workflows of options.burstSizes) {
      plan.push([`burst-${workflows}`, (ctx, engine, rep) =>
        burst(ctx, engine, { tag: `burst${workflows}-${rep}`, workflows, clients: options.burstClients, ...(capped(engine, workflows) ? { timeoutMs: options.burstCapS * 1000, cutOff: true } : { timeoutMs: timeoutFor(workflows) }) }),
      (engine, rep) => rep <= options.burstRepeat && (engine.supports.burstAtScale || workflows === smallest || options.burstCapS !== undefined)]);
    }
  }
  return plan;
}

/**
 * One repeat of `measure(probe)`, CPU-profiled when --profile asks and the engine can be (Shepherd): the
 * profile and its summary per executed step are saved, the summary printed, its figures kept in the outcome.
 */
async function withProfile(options, engine, where, measure) {
  if (!options.profile || !engine.supports.profile) return measure(undefined);
  const probe = loadProfiler(engine, { isolates: options.profileIsolates });
  await probe.connect();
  let outcome;
  try {
    outcome = await measure(probe);
  } finally {
    if (!probe.profile) probe.abandon();
  }
  const file = profilePath(resolve(repo, options.profile), where);
  const steps = outcome.completed * cases.STEPS_PER_WORKFLOW;
  const title = `${engine.label} ${where.caseName}, repeat ${where.rep}`;
  const { figures, markdown } = saveProfile(probe, { file, appDir: engine.appDir, steps, repo, title });
  outcome.profile = figures;
  log(figures.error ? `${engine.label}: no profile: ${figures.error}` : `${engine.label}: profile ${figures.file}\n\n${markdown}\n`);
  return outcome;
}

function versions(nodeBin) {
  const read = (command, args) => {
    try {
      return execFileSync(command, args, { encoding: "utf8" }).trim();
    } catch {
      return "unknown";
    }
  };
  return {
    node: read(nodeBin, ["--version"]).replace(/^v/, ""),
    wrangler: JSON.parse(readFileSync(join(repo, "node_modules", "wrangler", "package.json"), "utf8")).version,
    workerd: read(join(repo, "node_modules", ".bin", "workerd"), ["--version"]).replace(/^workerd\s+/, ""),
  };
}

/** One repeat of one case on one engine: wait for a quiet machine, measure, record; restart a dead engine. */
async function measureOnce(engine, ctx, name, run, rep, options, figures) {
  if (options.fresh && engine.measuredOnce) {
    // The objects earlier measurements left in memory would weigh on this one: a new runtime on the same state.
    log(`${engine.label}: restarting wrangler dev for a fresh runtime (--fresh)`);
    await engine.restart();
  }
  engine.measuredOnce = true;
  log(`${engine.label}: ${name} (repeat ${rep}/${options.repeat})`);
  const waitStarted = Date.now();
  const before = await waitForQuiet({ maxWaitMs: Math.min(options.quietWaitS * 1000, quietBudget.leftMs) });
  quietBudget.leftMs = Math.max(0, quietBudget.leftMs - (Date.now() - waitStarted));
  if (before >= 25) log(`other processes use ${before.toFixed(0)} % of a core; measuring anyway`);
  const otherLoad = watchOtherLoad();
  try {
    const outcome = await run(ctx, engine, rep);
    outcome.otherCpuPct = otherLoad();
    (figures[name] ??= []).push(outcome);
    log(`${engine.label}: ${name}: ${summarize(outcome)}`);
    return true;
  } catch (error) {
    log(`${engine.label}: ${name} failed: ${error.message}`);
    figures[name] = { error: error.message };
    if (!(await alive(engine))) {
      // One overloaded case should not cost the engine its other figures: start it again and go on.
      log(`${engine.label}: not answering any more; restarting wrangler dev (log: ${engine.logFile})`);
      await engine.restart();
    }
    return false;
  }
}

/**
 * Runs every case on every engine. Only one engine ever has work at a time. "interleaved" (the default)
 * keeps both engines up and alternates them repeat by repeat (Shepherd first in odd repeats, Workflows first
 * in even ones), so load from other processes on a shared machine falls on both alike; "sequential" runs all
 * of one engine, stops it, then the other.
 */
async function runAll(engines, sharedCtx, options, results) {
  // Ids (and so the remote's Idempotency-Keys) are unique per engine: the remote's per-key behaviour
  // (fail once, hang once) and its records must never mix the two engines' requests.
  const ctxOf = (engine) => ({ ...sharedCtx, runTag: `${sharedCtx.runTag}-${engine.name.slice(0, 2)}` });
  const start = async (engine) => {
    log(`${engine.label}: starting wrangler dev (${engine.source})`);
    await engine.start();
    log(`${engine.label}: ready; workerd pids ${engine.workerdPids().join(", ") || "(none found)"}`);
    results.engines[engine.name] = {};
  };
  const stop = async (engine) => {
    log(`${engine.label}: stopping`);
    await engine.stop();
  };
  const runCases = async (group) => {
    for (const [name, run, applies = () => true] of plannedCases(options)) {
      const failed = new Set();
      for (let rep = 1; rep <= options.repeat; rep++) {
        const order = rep % 2 === 1 ? group : [...group].reverse();
        for (const engine of order) {
          if (failed.has(engine) || !applies(engine, rep)) continue;
          const ok = await measureOnce(engine, ctxOf(engine), name, run, rep, options, results.engines[engine.name]);
          if (!ok) failed.add(engine);
        }
      }
    }
  };
  if (options.order === "sequential") {
    for (const engine of engines) {
      await start(engine);
      try {
        await runCases([engine]);
      } finally {
        await stop(engine);
      }
    }
    return;
  }
  try {
    for (const engine of engines) await start(engine);
    await runCases(engines);
  } finally {
    for (const engine of engines) await stop(engine);
  }
}

/** One repeat's figures on one line: rounded, raw samples and the profile's figures (printed on their own) left out. */
function summarize(outcome) {
  return JSON.stringify(outcome, (key, v) => (key === "samples" || key === "profile" ? undefined : typeof v === "number" ? Math.round(v * 100) / 100 : v));
}

/** Whether the engine still answers a read within a minute (three tries). */
async function alive(engine) {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      if ((await engine.readStatus("bench-health-probe")).state !== undefined) return true;
    } catch {
      // Timed out or refused: try again.
    }
  }
  return false;
}

async function main() {
  const { options, exitCode } = readCommandLine(process.argv.slice(2), { tool: "bench", usage: USAGE, parse: parseOptions });
  if (!options) {
    process.exitCode = exitCode;
    return;
  }
  installCleanup("bench");
  const ports = { remote: options.portBase, shepherd: options.portBase + 1, workflows: options.portBase + 3 };
  await assertPortsFree([ports.remote, ports.shepherd, ports.shepherd + 1, ports.workflows, ports.workflows + 1], { tool: "bench", range: PORT_RANGE });
  const tmp = mkdtempSync(join(tmpdir(), "shepherd-bench-"));
  // Interrupted, the run has nothing worth keeping unless asked (as chaos does with its sandbox).
  if (!options.keepTmp) atInterrupt(() => rmSync(tmp, { recursive: true, force: true }));
  const nodeBin = nodeForWrangler(repo);
  const engines = [];

  log(`temp dir ${tmp}; remote on 127.0.0.1:${ports.remote}`);
  const remote = await startRemote(ports.remote);
  const ctx = { remote, runTag: `b${Date.now().toString(36)}` };
  const results = {
    meta: {
      date: new Date().toISOString(),
      cores: cpus().length,
      cpuModel: cpus()[0]?.model ?? "unknown",
      memoryGb: Math.round(totalmem() / 2 ** 30),
      versions: versions(nodeBin),
      command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
      options,
    },
    engines: {},
  };

  let failed = false;
  try {
    const shepherd = shepherdEngine({ repo, tmp, port: ports.shepherd, inspectorPort: ports.shepherd + 1, source: options.source, verbose: options.verbose });
    results.meta.shepherdSource = shepherd.source;
    const all = { shepherd, workflows: workflowsEngine({ repo, tmp, port: ports.workflows, inspectorPort: ports.workflows + 1, verbose: options.verbose }) };
    engines.push(...options.engines.map((name) => all[name]));
    try {
      await runAll(engines, ctx, options, results);
    } catch (error) {
      // An engine that cannot start (or restart): its cases so far stay, the run reports the rest as missing.
      failed = true;
      log(error.message);
      results.error = error.message;
    }
  } finally {
    await remote.close();
  }

  results.meta.durationMin = (Date.now() - began) / 60_000;
  const table = renderTables(results, options);
  const errors = renderErrors(results);
  console.log(`\n${table}\n`);
  if (errors) {
    failed = true;
    console.log(`Cases that failed:\n${errors}\n`);
  }
  const out = resolve(repo, options.out);
  writeJson(out, results);
  log(`results: ${out}`);
  if (options.writeDocs) {
    writePerformanceDoc(join(repo, "docs", "performance.md"), results, options, table, errors);
    log("table written to docs/performance.md");
  }
  if (options.keepTmp || failed) log(`kept ${tmp} (snapshots, state, wrangler logs)`);
  else rmSync(tmp, { recursive: true, force: true });
  process.exitCode = failed ? 1 : 0;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
