// Runs a Worker with `wrangler dev` from a snapshot directory: its own ports, its own persisted state,
// no telemetry, no dev-registry shared with other wrangler sessions on the machine, output to a log file.
/* global process */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { runGroup, spawnGroup, stopGroup, workerdPids } from "./procs.mjs";
import { requestJson, sleep } from "./util.mjs";

/**
 * The Node that runs wrangler: this one when it is new enough, else the project's own (the `node` dev
 * dependency), since the system Node may be too old for wrangler.
 */
export function nodeForWrangler(repo) {
  const major = Number(process.versions.node.split(".")[0]);
  if (major >= 22) return process.execPath;
  const local = join(repo, "node_modules", ".bin", "node");
  if (existsSync(local)) return local;
  throw new Error(`Node ${process.versions.node} is too old for wrangler; run with \`npm run bench\` (Node 24)`);
}

export function wranglerEnv(tmp) {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    // A private registry: the engineer's own `wrangler dev` sessions never see ours, nor we theirs.
    WRANGLER_REGISTRY_PATH: join(tmp, "registry"),
    WRANGLER_LOG_PATH: join(tmp, "wrangler-logs"),
    NO_COLOR: "1",
  };
}

/** Runs `wrangler <args>` to completion in `cwd`; throws when it fails. */
export async function wranglerOnce({ repo, tmp, cwd, args, logFile }) {
  const bin = join(repo, "node_modules", "wrangler", "bin", "wrangler.js");
  const code = await runGroup(nodeForWrangler(repo), [bin, ...args], { cwd, env: wranglerEnv(tmp), logFile });
  if (code !== 0) throw new Error(`wrangler ${args.join(" ")} exited with ${code}; see ${logFile}`);
}

/**
 * Starts `wrangler dev` in `cwd` and waits until `healthPath` answers 200. Returns a handle with `url`,
 * `workerdPids()` (the runtime processes, for CPU and memory) and `stop()`.
 */
export async function startWranglerDev({ repo, tmp, cwd, port, inspectorPort, persistTo, vars = {}, logFile, healthPath, verbose }) {
  const bin = join(repo, "node_modules", "wrangler", "bin", "wrangler.js");
  const args = [
    bin,
    "dev",
    "--ip", "127.0.0.1",
    "--port", String(port),
    "--inspector-port", String(inspectorPort),
    "--persist-to", persistTo,
    "--show-interactive-dev-session=false",
    // Per-request log lines cost wrangler CPU at thousands of requests; warnings and errors still show.
    "--log-level", verbose ? "info" : "warn",
    ...Object.entries(vars).flatMap(([key, value]) => ["--var", `${key}:${value}`]),
  ];
  const proc = spawnGroup(nodeForWrangler(repo), args, { cwd, env: wranglerEnv(tmp), logFile });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`wrangler dev exited early (code ${proc.child.exitCode}); see ${logFile}`);
    try {
      const { status } = await requestJson(`${url}${healthPath}`, { timeoutMs: 2_000 });
      if (status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stopGroup(proc);
      throw new Error(`wrangler dev did not answer ${healthPath} within 90 s; see ${logFile}`);
    }
    await sleep(250);
  }
  return {
    url,
    pid: proc.child.pid,
    workerdPids: () => workerdPids(proc.child.pid),
    stop: () => stopGroup(proc),
  };
}
