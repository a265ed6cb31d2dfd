// Shepherd (or the bench's Workflows baseline) under `wrangler dev` for the tools. The project is run from
// a snapshot in a temp dir, never from the working tree: edits during a run then change nothing, and
// wrangler dev would reload on them, after which alarms stop firing (workerd#3566). The D1 migrations go
// into fresh persisted state; wrangler dev gets the tool's vars and ports and is ready once it answers a
// health path. No telemetry, no Request.cf download, a private dev registry, no colours.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { sleep } from "./async.ts";
import { d1Bindings } from "./d1-bindings.ts";
import { requestJson } from "./http-json.ts";
import { crashGroup, runGroup, spawnGroup, stopGroup } from "./process-groups.ts";
import type { ProcessGroup } from "./process-groups.ts";

/** What the Worker needs to build and run (`public/`: its static assets); nothing else of the project is copied. */
export const SNAPSHOT_PATHS: readonly string[] = ["src", "migrations", "public", "wrangler.toml", "package.json", "tsconfig.json"];
/** wrangler dev builds and starts in seconds; a minute and a half covers a loaded 2-core machine. */
const READY_TIMEOUT_MS = 90_000;
const HEALTH_PROBE_TIMEOUT_MS = 2_000;
const HEALTH_PROBE_INTERVAL_MS = 250;

/** Where a snapshot comes from: the working tree as it is, or the last commit. */
export type SnapshotSource = "worktree" | "head";

/** What a snapshot was copied from (see describeSource). */
export interface SourceDescription {
  source: SnapshotSource;
  /** The short commit, null outside git. */
  commit: string | null;
  /** How many of the snapshot's files the working tree had changed (0 for "head"). */
  dirtyFiles: number;
}

/**
 * Copies the Worker's sources into `dir` (node_modules symlinked): from the working tree (uncommitted work
 * included) or, with source "head", from the last commit (for a working tree mid-edit that does not build).
 * Returns describeSource's account of what was copied.
 */
export function snapshotProject(repo: string, dir: string, { source = "worktree" }: { source?: SnapshotSource } = {}): SourceDescription {
  mkdirSync(dir, { recursive: true });
  if (source === "head") {
    // The tar is a few MB (past execFileSync's default 1 MiB buffer): give it room.
    const archive = execFileSync("git", ["-C", repo, "archive", "--format=tar", "HEAD", ...SNAPSHOT_PATHS], { maxBuffer: 256 * 1024 * 1024 });
    execFileSync("tar", ["-x", "-C", dir], { input: archive });
  } else {
    for (const path of SNAPSHOT_PATHS) cpSync(join(repo, path), join(dir, path), { recursive: true });
  }
  symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"), "dir");
  return describeSource(repo, source);
}

/**
 * { source, commit, dirtyFiles }: the commit a snapshot came from (null outside git) and how many of the
 * snapshot's files the working tree had changed (0 for a "head" snapshot). Read-only git.
 */
export function describeSource(repo: string, source: SnapshotSource = "worktree"): SourceDescription {
  const git = (...args: string[]): string | null => {
    try {
      return execFileSync("git", ["-C", repo, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      return null;
    }
  };
  const dirty = source === "head" ? "" : git("status", "--porcelain", "--", ...SNAPSHOT_PATHS);
  return { source, commit: git("rev-parse", "--short", "HEAD"), dirtyFiles: dirty ? dirty.split("\n").length : 0 };
}

/**
 * The Node that runs wrangler: this one when it is new enough, else the project's own (the `node` dev
 * dependency), since the system Node may be too old for wrangler.
 */
export function nodeForWrangler(repo: string): string {
  const major = Number(process.versions.node.split(".")[0]);
  if (major >= 22) return process.execPath;
  const local = join(repo, "node_modules", ".bin", "node");
  if (existsSync(local)) return local;
  throw new Error(`Node ${process.versions.node} is too old for wrangler; run the tool through \`npm run\` (Node 24)`);
}

/** wrangler's environment: nothing leaves the machine and nothing is shared with other wrangler sessions. */
export function wranglerEnv(tmp: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    // A private registry: the engineer's own `wrangler dev` sessions never see ours, nor we theirs.
    WRANGLER_REGISTRY_PATH: join(tmp, "registry"),
    WRANGLER_LOG_PATH: join(tmp, "wrangler-logs"),
    CI: "true",
    NO_COLOR: "1",
    FORCE_COLOR: "0",
  };
}

const wranglerBin = (repo: string): string => join(repo, "node_modules", "wrangler", "bin", "wrangler.js");

/** Where a wrangler command runs: the repository (its node_modules), the tool's temp dir, the app's dir, its log. */
export interface WranglerPlace {
  repo: string;
  tmp: string;
  cwd: string;
  logFile: string;
}

/** Runs `wrangler <args>` to completion in `cwd` (bounded); throws when it fails. */
export async function runWrangler({ repo, tmp, cwd, args, logFile }: WranglerPlace & { args: readonly string[] }): Promise<void> {
  const title = `wrangler ${args.join(" ")}`;
  const code = await runGroup(nodeForWrangler(repo), [wranglerBin(repo), ...args], { cwd, env: wranglerEnv(tmp), logFile, title });
  if (code !== 0) throw new Error(`${title} exited with ${code}; see ${logFile}`);
}

/** `wrangler d1 migrations apply <binding> --local` for every D1 database `cwd`'s wrangler.toml binds (DB, DB_1 ...). */
export async function applyD1Migrations({ repo, tmp, cwd, persistTo, logFile }: WranglerPlace & { persistTo: string }): Promise<void> {
  for (const binding of d1Bindings(join(cwd, "wrangler.toml"))) {
    await runWrangler({ repo, tmp, cwd, logFile, args: ["d1", "migrations", "apply", binding, "--local", "--persist-to", persistTo] });
  }
}

export interface WranglerDevOptions extends WranglerPlace {
  port: number;
  inspectorPort: number;
  persistTo: string;
  /** Passed as --var flags. */
  vars?: Record<string, string>;
  /** wrangler's --log-level, when given. */
  logLevel?: string;
  /** What answers 200 once the Worker is ready (default /healthz). */
  healthPath?: string;
  /** --test-scheduled: GET /__scheduled runs the cron handler. */
  testScheduled?: boolean;
}

/** A `wrangler dev` the tool runs. */
export interface WranglerDev {
  url: string;
  logFile: string;
  /** The wrangler process's (the group's leader), once started. */
  pid: number | undefined;
  /** How long the last start took. */
  readyMs: number | undefined;
  /** Resolves once the health path answers 200; throws after READY_TIMEOUT_MS or when wrangler exits first. */
  start(): Promise<WranglerDev>;
  /** Ends it with the grace period. */
  stop(): Promise<void>;
  /** Kills it at once. */
  crash(): Promise<void>;
  /** Stops (or crashes) it and starts it again on the same state. */
  restart(options?: { crash?: boolean }): Promise<WranglerDev>;
}

/**
 * `wrangler dev` in `cwd` on 127.0.0.1:port, persisting to `persistTo`, with the tool's vars; see
 * WranglerDevOptions and WranglerDev.
 */
export function wranglerDev(options: WranglerDevOptions): WranglerDev {
  const { repo, tmp, cwd, logFile } = options;
  const args = devArgs(options);
  const title = `wrangler ${args.join(" ")}`;
  let proc: ProcessGroup | undefined;
  const handle: WranglerDev = {
    url: `http://127.0.0.1:${options.port}`,
    logFile,
    pid: undefined,
    readyMs: undefined,
    async start() {
      const startedAt = Date.now();
      proc = spawnGroup(nodeForWrangler(repo), [wranglerBin(repo), ...args], { cwd, env: wranglerEnv(tmp), logFile, title });
      handle.pid = proc.child.pid;
      handle.readyMs = await untilHealthy(proc, handle.url, startedAt, options);
      return handle;
    },
    stop: async () => proc && stopGroup(proc),
    crash: async () => proc && crashGroup(proc),
    async restart({ crash = false } = {}) {
      await (crash ? handle.crash() : handle.stop());
      return handle.start();
    },
  };
  return handle;
}

function devArgs({ port, inspectorPort, persistTo, vars = {}, logLevel, testScheduled = false }: WranglerDevOptions): string[] {
  return [
    "dev",
    // GET /__scheduled runs the cron handler: wrangler dev never runs cron triggers on its own.
    ...(testScheduled ? ["--test-scheduled"] : []),
    "--ip", "127.0.0.1",
    "--port", String(port),
    "--inspector-port", String(inspectorPort),
    "--persist-to", persistTo,
    "--show-interactive-dev-session=false",
    ...(logLevel ? ["--log-level", logLevel] : []),
    ...Object.entries(vars).flatMap(([key, value]) => ["--var", `${key}:${value}`]),
  ];
}

/**
 * Probes the health path until it answers 200; resolves with how long that took since startedAt. Stops the
 * group and throws when wrangler exits first or READY_TIMEOUT_MS passes.
 */
async function untilHealthy(proc: ProcessGroup, url: string, startedAt: number, { logFile, healthPath = "/healthz" }: WranglerDevOptions): Promise<number> {
  let exitStatus: number | null = null;
  void proc.exited.then((code) => (exitStatus = code));
  while (Date.now() - startedAt < READY_TIMEOUT_MS) {
    if (exitStatus !== null) throw new Error(`wrangler dev exited with ${exitStatus} before ${healthPath} answered; see ${logFile}`);
    try {
      const { status } = await requestJson(`${url}${healthPath}`, { timeoutMs: HEALTH_PROBE_TIMEOUT_MS });
      if (status === 200) return Date.now() - startedAt;
    } catch {
      // Not listening yet.
    }
    await sleep(HEALTH_PROBE_INTERVAL_MS);
  }
  await stopGroup(proc);
  throw new Error(`wrangler dev did not answer ${healthPath} within ${READY_TIMEOUT_MS / 1000} s; see ${logFile}`);
}
