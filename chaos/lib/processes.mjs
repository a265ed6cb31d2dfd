// Child processes of the harness. Each one runs in its own process group (wrangler starts workerd beneath
// it), so stopping a child means signalling the whole group; whatever happens to the harness (normal end,
// error, Ctrl-C, the watchdog) every group it started is killed, by its id and nothing else.
/* global process, console, setTimeout */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { Transform } from "node:stream";

const groups = new Set();
/** Synchronous extra clean-ups (the temp dir) for when the harness is interrupted. */
const onInterrupt = [];
let cleanupInstalled = false;

export function atInterrupt(fn) {
  onInterrupt.push(fn);
}

/** Kills every group still registered. Synchronous so it also works from process.on("exit"). */
export function killAllGroups(signal = "SIGKILL") {
  for (const pid of groups) {
    try {
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  }
  groups.clear();
}

/** Installs the exit, signal and crash hooks once; `onSignal` runs before exiting on SIGINT/SIGTERM. */
export function installCleanup() {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on("exit", () => killAllGroups());
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => {
      console.error(`\nchaos: ${signal}, stopping children`);
      killAllGroups();
      for (const fn of onInterrupt) {
        try {
          fn();
        } catch {
          // Best effort: the children are already gone, which is what matters.
        }
      }
      process.exit(130);
    });
  }
  process.on("uncaughtException", (error) => {
    console.error("chaos: uncaught exception:", error);
    killAllGroups();
    process.exit(1);
  });
  process.on("unhandledRejection", (error) => {
    console.error("chaos: unhandled rejection:", error);
    killAllGroups();
    process.exit(1);
  });
}

/**
 * Spawns a command in a new process group. Output goes to `logStream` (if any); resolves `exited` with the
 * exit code (or 1 after a signal).
 */
export function spawnGroup(command, args, { cwd, env, logStream }) {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  groups.add(child.pid);
  if (logStream) {
    child.stdout.pipe(stripAnsi()).pipe(logStream, { end: false });
    child.stderr.pipe(stripAnsi()).pipe(logStream, { end: false });
  } else {
    child.stdout.resume();
    child.stderr.resume();
  }
  const exited = new Promise((resolve) => {
    child.on("error", () => resolve(1));
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
  return { child, exited };
}

/** Stops a group: SIGTERM, then SIGKILL after `graceMs` (0 = kill at once, a crash). Waits for the leader. */
export async function stopGroup({ child, exited }, graceMs = 0) {
  const pid = child.pid;
  const signalGroup = (signal) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  };
  if (graceMs > 0) {
    signalGroup("SIGTERM");
    const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!done) signalGroup("SIGKILL");
  } else {
    signalGroup("SIGKILL");
  }
  // Any straggler of the group (workerd) goes too, even when the leader exited on SIGTERM.
  signalGroup("SIGKILL");
  await Promise.race([exited, sleep(5_000)]);
  groups.delete(pid);
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// eslint-disable-next-line no-control-regex -- matching the escape character is the point
const ANSI_COLOUR = /\x1b\[[0-9;]*m/g;

/** workerd colours its errors whatever NO_COLOR says; the log is for grepping, so colours go. */
function stripAnsi() {
  return new Transform({
    transform(chunk, _encoding, callback) {
      callback(null, chunk.toString("utf8").replace(ANSI_COLOUR, ""));
    },
  });
}

/** Fails early, with the port named, when something already listens on one of ours. */
export async function assertPortsFree(ports) {
  for (const port of ports) {
    await new Promise((resolve, reject) => {
      const probe = createServer();
      probe.once("error", () => reject(new Error(`port ${port} on 127.0.0.1 is in use (chaos uses 8810–8819; see --port-base)`)));
      probe.listen(port, "127.0.0.1", () => probe.close(resolve));
    });
  }
}
