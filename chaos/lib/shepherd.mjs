// Shepherd under test: a frozen copy of the project in a temp dir, run by `wrangler dev` with persisted
// local state. The copy matters: wrangler dev reloads on source edits and alarms stop firing after a reload
// (workerd#3566), and the repo is being edited while a soak runs. Restarting keeps the same --persist-to,
// like a redeploy or a crash of the whole process.
/* global process, fetch, AbortSignal */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sleep, spawnGroup, stopGroup } from "./processes.mjs";

const COPIED = ["src", "migrations", "wrangler.toml", "package.json", "tsconfig.json"];
export const API_TOKEN = "chaos-token";
const HEALTH_TIMEOUT_MS = 90_000;

/** Copies the project into a fresh temp dir (node_modules symlinked) and describes what was copied. */
export function createSandbox(repoRoot) {
  const dir = mkdtempSync(join(tmpdir(), "shepherd-chaos-"));
  for (const name of COPIED) cpSync(join(repoRoot, name), join(dir, name), { recursive: true });
  symlinkSync(join(repoRoot, "node_modules"), join(dir, "node_modules"), "dir");
  return {
    dir,
    persistTo: join(dir, "state"),
    wranglerBin: join(repoRoot, "node_modules", "wrangler", "bin", "wrangler.js"),
    source: describeSource(repoRoot),
    features: detectFeatures(join(dir, "src")),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Which commit the copy came from and whether src/ had uncommitted edits (read-only git). */
function describeSource(repoRoot) {
  const git = (...args) => {
    try {
      return execFileSync("git", args, { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      return null;
    }
  };
  const dirty = git("status", "--porcelain", "--", ...COPIED);
  return { commit: git("rev-parse", "--short", "HEAD"), dirtyFiles: dirty ? dirty.split("\n").length : 0 };
}

/**
 * Whether the copied source knows the FAULTS var and each fault name. A static look only: it tells the
 * report that a server-side fault was never injected because this build does not have the hook yet.
 */
function detectFeatures(srcDir) {
  const text = readTree(srcDir);
  const faultKeys = ["agentDiesAfterClaim", "dropHeartbeats", "abortAfterPersist", "alarmThrows", "enqueueFails", "indexWriteFails", "consumerThrows"];
  return {
    faultsVar: /\bFAULTS\b/.test(text),
    devHooks: /\bDEV_HOOKS\b/.test(text),
    faultKeys: Object.fromEntries(faultKeys.map((key) => [key, text.includes(key)])),
  };
}

function readTree(dir) {
  let text = "";
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) text += readTree(path);
    else if (/\.(ts|js|mjs)$/.test(name)) text += readFileSync(path, "utf8");
  }
  return text;
}

function wranglerEnv() {
  // No telemetry, no download of the Request.cf placeholder data: the run stays on this machine.
  // No colours either: the log is read by people and grepped.
  return { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true", NO_COLOR: "1", FORCE_COLOR: "0" };
}

/** `wrangler d1 migrations apply DB --local` into the sandbox's persisted state. */
export async function applyMigrations(sandbox, logStream) {
  const proc = spawnGroup(process.execPath, [sandbox.wranglerBin, "d1", "migrations", "apply", "DB", "--local", "--persist-to", sandbox.persistTo], {
    cwd: sandbox.dir,
    env: wranglerEnv(),
    logStream,
  });
  const code = await Promise.race([proc.exited, sleep(60_000).then(() => "timeout")]);
  await stopGroup(proc);
  if (code !== 0) throw new Error(`d1 migrations apply failed (${code}); see the wrangler log`);
}

/**
 * Starts `wrangler dev` on 127.0.0.1:port and waits for GET /healthz. Returns the process handle for
 * `stopShepherd`. `serverFaults` becomes the FAULTS var (honoured only with DEV_HOOKS=true).
 */
export async function startShepherd(sandbox, { port, inspectorPort, serverFaults, logStream }) {
  const args = [
    sandbox.wranglerBin, "dev",
    "--ip", "127.0.0.1",
    "--port", String(port),
    "--inspector-port", String(inspectorPort),
    "--persist-to", sandbox.persistTo,
    "--show-interactive-dev-session=false",
    "--var", "TASK_TOKEN_SECRET:chaos-secret",
    "--var", "ALLOW_PRIVATE_TARGETS:true",
    "--var", `API_TOKENS:chaos:${API_TOKEN}`,
    "--var", "DEV_HOOKS:true",
    "--var", `FAULTS:${JSON.stringify(serverFaults)}`,
  ];
  logStream?.write(`\n===== ${new Date().toISOString()} wrangler ${args.slice(1).join(" ")}\n`);
  const proc = spawnGroup(process.execPath, args, { cwd: sandbox.dir, env: wranglerEnv(), logStream });
  const started = Date.now();
  let exitCode = null;
  proc.exited.then((code) => {
    exitCode = code;
  });
  while (Date.now() - started < HEALTH_TIMEOUT_MS) {
    if (exitCode !== null) throw new Error(`wrangler dev exited with ${exitCode} before /healthz answered; see the wrangler log`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (response.ok) return { ...proc, readyMs: Date.now() - started };
    } catch {
      // Not listening yet.
    }
    await sleep(250);
  }
  await stopGroup(proc);
  throw new Error(`wrangler dev did not answer /healthz within ${HEALTH_TIMEOUT_MS / 1000} s`);
}

/** Kills wrangler and workerd at once (a crash, not a graceful stop), as the mid-run restart wants. */
export async function stopShepherd(proc, { graceful = false } = {}) {
  await stopGroup(proc, graceful ? 3_000 : 0);
}
