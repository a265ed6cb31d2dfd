// Child processes of the tools (`npm run bench`, `npm run chaos`). Each child runs in its own process group,
// so one signal reaches it and everything it started (wrangler's workerd, esbuild); its output goes to a log
// file with colours stripped. Whatever ends the tool (a normal end, an error, a signal, a watchdog), every
// group it started is killed, by its own id and nothing else.
import { spawn } from "node:child_process";
import type { ChildProcessByStdio } from "node:child_process";
import { createWriteStream } from "node:fs";
import { constants } from "node:os";
import { Transform } from "node:stream";
import type { Readable } from "node:stream";
import { within } from "./async.ts";
import { descendants, readStat } from "./process-tree.ts";

/**
 * Between SIGTERM and SIGKILL when a group is stopped. wrangler dev answers SIGTERM by stopping workerd
 * and closing its local state, about a second on a loaded 2-core machine, more when the machine is busier.
 * The bench gave 5 s, chaos 3 s: 5 s, because a SIGKILL that lands mid-shutdown is the one outcome a
 * graceful stop exists to avoid, and two seconds more at worst, at the end of a run or after Ctrl-C, cost
 * nothing. A crash on purpose (chaos's restart) gives none: see crashGroup.
 */
export const STOP_GRACE_MS = 5_000;
/** After SIGKILL the leader is waited for this long at most: the kernel has it gone within milliseconds. */
const REAP_WAIT_MS = 5_000;
/** Runs to completion (a migration) are bounded by default too: 2 min is far beyond the seconds they take. */
const RUN_TIMEOUT_MS = 120_000;

/** A child started by spawnGroup: its stdin ignored, its stdout and stderr piped to the log. */
export type GroupChild = ChildProcessByStdio<null, Readable, Readable>;

/** A process group the tool started. */
export interface ProcessGroup {
  child: GroupChild;
  /** Resolves with the exit status (see exitStatus). */
  exited: Promise<number>;
  /** Resolves once the log has everything. */
  logged: Promise<void>;
}

export interface SpawnOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Where stdout and stderr go; dropped without one. */
  logFile?: string;
  /** Names the run in the log and in errors (default: the command line). */
  title?: string;
}

/** Every group started and not yet seen exit: the exit and signal hooks stop whatever is left. */
const live = new Set<ProcessGroup>();
/** The tool's own clean-ups for a signal (chaos's temp dir), run once the children are gone. */
const interruptHooks: Array<() => void> = [];
let cleanupInstalled = false;

/**
 * A child's exit status as a shell reports it: its code, or 128 + the signal's number when a signal ended
 * it (137 for SIGKILL, 143 for SIGTERM); 127 when it could not be started (the shell's "not found"). The
 * bench said 128 and chaos 1 for any signal; the shell's convention names the signal and still tells
 * "killed" from "failed" (a code of 1). The tools themselves exit the same way after a signal: see
 * installCleanup.
 */
export function exitStatus(code: number | null | undefined, signal: NodeJS.Signals | null): number {
  if (code !== null && code !== undefined) return code;
  return 128 + ((signal === null ? undefined : constants.signals[signal]) ?? 0);
}

/**
 * Starts `command` in a new process group. stdout and stderr are appended to `logFile` (after a `=====`
 * line naming the run) with ANSI colours stripped, or dropped without a log file. Returns
 * { child, exited, logged }: `exited` resolves with the exit status, `logged` once the log has everything.
 */
export function spawnGroup(command: string, args: readonly string[], { cwd, env, logFile, title = [command, ...args].join(" ") }: SpawnOptions): ProcessGroup {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const proc: ProcessGroup = { child, logged: logOutput(child, logFile, title), exited: Promise.resolve(0) };
  live.add(proc);
  proc.exited = new Promise((resolve) => {
    child.once("error", () => {
      live.delete(proc);
      resolve(127);
    });
    child.once("exit", (code, signal) => {
      live.delete(proc);
      resolve(exitStatus(code, signal));
    });
  });
  return proc;
}

/** Pipes the child's output into the log file; resolves once both streams ended and the file is closed. */
function logOutput(child: GroupChild, logFile: string | undefined, title: string): Promise<void> {
  if (!logFile) {
    child.stdout.resume();
    child.stderr.resume();
    return Promise.resolve();
  }
  const file = createWriteStream(logFile, { flags: "a" });
  file.write(`\n===== ${new Date().toISOString()} ${title}\n`);
  let open = 2;
  for (const stream of [child.stdout, child.stderr]) {
    stream.pipe(stripAnsi()).on("end", () => {
      if (--open === 0) file.end();
    }).pipe(file, { end: false });
  }
  return new Promise((resolve) => file.once("close", () => resolve()).on("error", () => resolve()));
}

// eslint-disable-next-line no-control-regex -- matching the escape character is the point
const ANSI_COLOUR = /\x1b\[[0-9;]*m/g;

/** workerd and wrangler colour some lines whatever NO_COLOR says; the logs are for grepping, so colours go. */
function stripAnsi(): Transform {
  return new Transform({
    transform(chunk, _encoding, callback) {
      callback(null, (chunk as Buffer).toString("utf8").replace(ANSI_COLOUR, ""));
    },
  });
}

/** Runs a command to completion in its own group, bounded by timeoutMs; resolves with its exit status. */
export async function runGroup(command: string, args: readonly string[], options: SpawnOptions, timeoutMs: number = RUN_TIMEOUT_MS): Promise<number> {
  const proc = spawnGroup(command, args, options);
  const result = await within(proc.exited, timeoutMs, "timeout");
  if (result === "timeout") {
    await stopGroup(proc);
    throw new Error(`${options.title ?? command} did not finish within ${timeoutMs / 1000} s`);
  }
  await proc.logged;
  return result;
}

/**
 * Ends a group: SIGTERM, then SIGKILL after graceMs (0: SIGKILL at once, a crash). SIGKILL goes to the
 * group even when its leader has already exited, for anything of it still there (workerd); processes that
 * left the group (a daemonising child would) are found through /proc before the leader goes and killed
 * too, unless their pid has meanwhile passed to another process. Waits for the leader and the log.
 */
export async function stopGroup(proc: ProcessGroup, { graceMs = STOP_GRACE_MS }: { graceMs?: number } = {}): Promise<void> {
  const { child, exited } = proc;
  if (child.pid === undefined) return;
  const running = live.has(proc);
  const strays = running ? descendants(child.pid).map(readStat).filter((stat) => stat !== undefined) : [];
  if (running && graceMs > 0) {
    signalGroup(child.pid, "SIGTERM");
    await within(exited, graceMs);
  }
  signalGroup(child.pid, "SIGKILL");
  for (const stray of strays) if (readStat(stray.pid)?.startTicks === stray.startTicks) signal(stray.pid, "SIGKILL");
  await within(exited, REAP_WAIT_MS);
  live.delete(proc);
  await within(proc.logged, REAP_WAIT_MS);
}

/** Kills a group at once, as a crash of the whole machine would: no SIGTERM, no grace. */
export function crashGroup(proc: ProcessGroup): Promise<void> {
  return stopGroup(proc, { graceMs: 0 });
}

/** Stops every live group (each with the grace period), in parallel. */
export async function stopAllGroups(): Promise<void> {
  await Promise.all([...live].map((proc) => stopGroup(proc)));
}

/** SIGKILLs every live group. Synchronous, so it also works from process.on("exit") and a watchdog. */
export function killAllGroups(): void {
  for (const proc of live) signalGroup(proc.child.pid, "SIGKILL");
  live.clear();
}

function signalGroup(pid: number | undefined, name: NodeJS.Signals): void {
  if (pid !== undefined) signal(-pid, name);
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** A synchronous clean-up to run when the tool is interrupted, after its children are gone. */
export function atInterrupt(fn: () => void): void {
  interruptHooks.push(fn);
}

/**
 * Installs, once, the hooks that leave nothing running: at exit every live group is SIGKILLed; on SIGINT,
 * SIGTERM or SIGHUP the groups are stopped with the grace period (a second signal kills them at once), the
 * atInterrupt clean-ups run, and the tool exits 128 + the signal's number, as a shell reports a process a
 * signal ended (130 for Ctrl-C); an uncaught error kills them and exits 1. `tool` prefixes the messages.
 */
export function installCleanup(tool: string): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on("exit", killAllGroups);
  const onSignal = stopOnSignal(tool);
  for (const name of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(name, onSignal);
  process.on("uncaughtException", (error: unknown) => dieOf(tool, "uncaught exception", error));
  process.on("unhandledRejection", (error: unknown) => dieOf(tool, "unhandled rejection", error));
}

/** The signal handler: stop the groups gracefully and exit, or kill them at once on a second signal. */
function stopOnSignal(tool: string): (name: NodeJS.Signals) => void {
  let stopping = false;
  return (name) => {
    const status = exitStatus(null, name);
    if (stopping) {
      killAllGroups();
      process.exit(status);
    }
    stopping = true;
    console.error(`\n${tool}: ${name}, stopping child processes`);
    void within(stopAllGroups(), STOP_GRACE_MS + REAP_WAIT_MS).finally(() => {
      killAllGroups();
      runInterruptHooks();
      process.exit(status);
    });
  };
}

function runInterruptHooks(): void {
  for (const hook of interruptHooks) {
    try {
      hook();
    } catch {
      // Best effort: the children are gone, which is what matters.
    }
  }
}

function dieOf(tool: string, what: string, error: unknown): void {
  console.error(`${tool}: ${what}:`, error);
  killAllGroups();
  process.exit(1);
}
