// `npm run chaos`: the chaos soak of rows 25 and 26 of the fault matrix (docs/reliability.md). One command that starts a
// misbehaving remote service and a frozen copy of Shepherd under `wrangler dev`, runs a bounded load of sagas
// through remote and Worker-side faults with one crash-restart in the middle and, at the same time, a burst
// of extra workflows started at once, then checks what Temporal's omes and Restate's Jepsen checks would:
// everything ended, nothing happened twice, the index agrees, supervision never lapsed, the run made
// progress, the burst's backlog failed nobody, and the v1.1 supervisor catches a stalled agent, verifies an
// answer that was lost, and parks work for a host that is down instead of burning its attempts. Prints one
// table, writes chaos/results/latest.json, and exits non-zero when a check fails (or was skipped because its
// API is missing, unless --allow-skips).
//
//   npm run chaos                      # 200 workflows, 10 concurrent, burst of 2000, one restart
//   npm run chaos -- --quick           # CI: 30 workflows, 5 concurrent, burst of 300
//   npm run chaos -- --help
//
// The soak's own logic is in chaos/ (see chaos/README.md, "What runs"); process groups, the project
// snapshot and `wrangler dev`, flags, ports, the fake remote's server, waiting and statistics are shared
// with the bench in scripts/lib/.
/* global URL, console, process, setTimeout */
import { copyFileSync, cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { readCommandLine } from "../scripts/lib/cli.ts";
import { writeJson } from "../scripts/lib/output-files.ts";
import { assertPortsFree } from "../scripts/lib/ports.ts";
import { atInterrupt, installCleanup, killAllGroups } from "../scripts/lib/process-groups.ts";
import type { ChaosOptions } from "./lib/args.ts";
import { portsOf, startHosts } from "./lib/hosts.ts";
import type { Hosts } from "./lib/hosts.ts";
import { judgeSoak } from "./lib/judge.ts";
import { renderReport } from "./lib/report.ts";
import { applyMigrations, createSandbox, startShepherd } from "./lib/shepherd.ts";
import type { Sandbox, Shepherd } from "./lib/shepherd.ts";
import { runSoak } from "./lib/soak.ts";
import { buildReport } from "./lib/soak-report.ts";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
/** The pool phase's workers' logs: in the temp dir during the run, copied to results/ at its end. */
const POOL_LOGS = "pool-workers";
/** Beyond the bound, the watchdog kills everything: the harness must stop by itself even if it hangs. */
const WATCHDOG_GRACE_S = 45;

const log = (message: string): void => console.log(`chaos: ${message}`);

/** What a run has started, for the soak to use and the end to stop. */
interface Run {
  options: ChaosOptions;
  runStart: number;
  hosts: Hosts;
  sandbox: Sandbox;
}

async function main(): Promise<number> {
  // The flags import the fault names from src/dev/fault-names.ts, which only a node that strips types can load:
  // asked first, so an old node gets this line rather than a loader error.
  if (!process.features.typescript) {
    console.error(`chaos: node ${process.versions.node} cannot load src/dev/fault-names.ts and is too old for wrangler; run it as \`npm run chaos\` (node from devDependencies)`);
    return 2;
  }
  const { parseArgs, PORT_RANGE, SERVER_FAULT_KEYS, USAGE } = await import("./lib/args.ts");
  const line = readCommandLine(process.argv.slice(2), { tool: "chaos", usage: USAGE, parse: parseArgs });
  if (line.options === undefined) return line.exitCode ?? 2;
  const options: ChaosOptions = line.options;
  installCleanup("chaos");
  mkdirSync(resultsDir, { recursive: true });
  const runStart = Date.now();
  startWatchdog(options.maxSeconds);
  const ports = portsOf(options.portBase);
  await assertPortsFree(Object.values(ports), { tool: "chaos", range: PORT_RANGE });
  const hosts = await startHosts(ports, options, `http://127.0.0.1:${ports.shepherd}`);
  log(`remote service on ${hosts.remote.url} (seed ${options.seed}), the breaker scenario's host on ${hosts.secondHost.url}, the noisy neighbour's on ${hosts.quietHost.url}`);
  const sandbox = createSandbox(repoRoot, { faultNames: SERVER_FAULT_KEYS });
  if (!options.keep) atInterrupt(sandbox.remove);
  const run: Run = { options, runStart, hosts, sandbox };
  let shepherd: Shepherd | null = null;
  try {
    log(`project copied to ${sandbox.dir} (commit ${sandbox.source.commit}, ${sandbox.source.dirtyFiles} uncommitted file(s)); applying D1 migrations`);
    await applyMigrations(sandbox);
    shepherd = await startShepherd(sandbox, { port: ports.shepherd, inspectorPort: ports.inspector, serverFaults: options.serverFaults });
    log(`shepherd on http://127.0.0.1:${ports.shepherd} after ${shepherd.readyMs} ms; FAULTS hook ${sandbox.features.faultsVar ? "present" : "absent in this build"}`);
    return await soakAndReport(run, shepherd, `http://127.0.0.1:${ports.shepherd}`);
  } finally {
    await shepherd?.stop();
    await cleanUp(run);
  }
}

function startWatchdog(maxSeconds: number): void {
  setTimeout(() => {
    console.error(`chaos: watchdog: still running ${WATCHDOG_GRACE_S} s past the ${maxSeconds} s bound; killing everything`);
    killAllGroups();
    process.exit(3);
  }, (maxSeconds + WATCHDOG_GRACE_S) * 1000).unref();
}

/** The soak, its checks, and the report: one table on stdout, the same as JSON in results/latest.json. */
async function soakAndReport({ options, runStart, hosts, sandbox }: Run, shepherd: Shepherd, shepherdUrl: string): Promise<number> {
  const workDir = join(sandbox.dir, POOL_LOGS);
  mkdirSync(workDir, { recursive: true });
  const soak = await runSoak({ options, hosts, shepherdUrl, shepherd, runStart, workDir, log });
  const judged = await judgeSoak(soak, hosts, { features: sandbox.features, serverFaults: options.serverFaults, allowSkips: options.allowSkips });
  const report = buildReport(soak, judged, { options, sandbox, runStart, shepherdReadyMs: shepherd.readyMs });
  const resultsPath = join(resultsDir, "latest.json");
  writeJson(resultsPath, report);
  console.log(renderReport(report));
  console.log(`\nchaos: report written to ${resultsPath}; wrangler log in ${join(resultsDir, "wrangler.log")}`);
  return judged.exitCode;
}

async function cleanUp({ options, hosts, sandbox }: Run): Promise<void> {
  await hosts.close();
  if (existsSync(sandbox.logFile)) copyFileSync(sandbox.logFile, join(resultsDir, "wrangler.log"));
  rmSync(join(resultsDir, POOL_LOGS), { recursive: true, force: true });
  if (existsSync(join(sandbox.dir, POOL_LOGS))) cpSync(join(sandbox.dir, POOL_LOGS), join(resultsDir, POOL_LOGS), { recursive: true });
  if (options.keep) log(`kept ${sandbox.dir}`);
  else sandbox.remove();
}

main().then(
  (code) => {
    killAllGroups();
    process.exit(code);
  },
  (error: unknown) => {
    console.error("chaos: run failed:", error);
    killAllGroups();
    process.exit(1);
  },
);
