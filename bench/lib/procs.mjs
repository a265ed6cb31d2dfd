// Child processes of the bench: each in its own process group so one signal ends it and everything it
// spawned (wrangler's workerd, esbuild), plus CPU and memory readings of those processes from /proc.
/* global process, console, setTimeout, clearTimeout */
import { execFileSync, spawn } from "node:child_process";
import { openSync, readdirSync, readFileSync } from "node:fs";

/** Every group we started and have not yet seen exit: the exit hooks kill whatever is left. */
const live = new Set();

/**
 * Starts `command` in a new process group with its output appended to `logFile`.
 * Returns { child, exited } where `exited` resolves with the exit code.
 */
export function spawnGroup(command, args, { cwd, env, logFile }) {
  const out = openSync(logFile, "a");
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", out, out], detached: true });
  live.add(child);
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      live.delete(child);
      resolve(code ?? (signal ? 128 : 0));
    });
    child.on("error", () => {
      live.delete(child);
      resolve(127);
    });
  });
  return { child, exited };
}

/** Runs a command to completion in its own group (bounded by timeoutMs); resolves with the exit code. */
export async function runGroup(command, args, options, timeoutMs = 120_000) {
  const proc = spawnGroup(command, args, options);
  let timer;
  const timedOut = new Promise((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const result = await Promise.race([proc.exited, timedOut]);
  clearTimeout(timer);
  if (result === "timeout") {
    await stopGroup(proc);
    throw new Error(`${command} ${args.join(" ")} did not finish within ${timeoutMs} ms`);
  }
  return result;
}

/**
 * Ends a group: SIGTERM, then SIGKILL if it is still there after graceMs. Descendants that left the group
 * (a daemonising child would) are found through /proc before the parent goes and killed too.
 */
export async function stopGroup({ child, exited }, graceMs = 5_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const strays = descendants(child.pid);
  signalGroup(child.pid, "SIGTERM");
  let timer;
  const gaveUp = new Promise((resolve) => {
    timer = setTimeout(() => resolve("timeout"), graceMs);
  });
  const result = await Promise.race([exited, gaveUp]);
  clearTimeout(timer);
  if (result === "timeout") signalGroup(child.pid, "SIGKILL");
  for (const pid of strays) signalPid(pid, "SIGKILL");
}

function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

function signalPid(pid, signal) {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Kills every group still running when the bench ends, however it ends: normal exit, an error, SIGINT or
 * SIGTERM. `onSignal` runs first (async cleanup) for the signals.
 */
export function installCleanup(onSignal) {
  const killAll = () => {
    for (const child of live) signalGroup(child.pid, "SIGKILL");
  };
  process.on("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.once(signal, async () => {
      console.error(`\n${signal}: stopping child processes`);
      try {
        await Promise.race([onSignal?.(), new Promise((resolve) => setTimeout(resolve, 8_000))]);
      } finally {
        killAll();
        process.exit(130);
      }
    });
  }
}

// ---- /proc readings ----------------------------------------------------------------------------------

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** { pid, ppid, comm, cpuMs } from /proc/<pid>/stat, or undefined when the process is gone. */
function readStat(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // comm is in parentheses and may itself contain spaces or parentheses: split after the last ')'.
  const close = text.lastIndexOf(")");
  const comm = text.slice(text.indexOf("(") + 1, close);
  const fields = text.slice(close + 2).split(" ");
  // Fields after comm start at field 3 (state); utime and stime are fields 14 and 15.
  const ppid = Number(fields[1]);
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { pid, ppid, comm, cpuMs: (ticks * 1000) / CLOCK_TICKS };
}

function allPids() {
  return readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number);
}

/** Every process below `root` (not root itself), found by walking parent links in /proc. */
export function descendants(root) {
  const children = new Map();
  for (const pid of allPids()) {
    const stat = readStat(pid);
    if (!stat) continue;
    if (!children.has(stat.ppid)) children.set(stat.ppid, []);
    children.get(stat.ppid).push(pid);
  }
  const found = [];
  const stack = [root];
  while (stack.length > 0) {
    for (const pid of children.get(stack.pop()) ?? []) {
      found.push(pid);
      stack.push(pid);
    }
  }
  return found;
}

/** The workerd processes that a wrangler process spawned (the runtime that runs the Worker). */
export function workerdPids(root) {
  return descendants(root).filter((pid) => readStat(pid)?.comm === "workerd");
}

/** Sum of user+system CPU of these processes, in ms (processes that exited are left out). */
export function cpuMs(pids) {
  return pids.reduce((sum, pid) => sum + (readStat(pid)?.cpuMs ?? 0), 0);
}

/** { rssKb, hwmKb }: current and peak resident memory, summed over these processes. */
export function memoryKb(pids) {
  let rssKb = 0;
  let hwmKb = 0;
  for (const pid of pids) {
    let status;
    try {
      status = readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
      continue;
    }
    rssKb += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    hwmKb += Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return { rssKb, hwmKb };
}

/**
 * Samples the summed RSS of `pids()` every intervalMs until stopped; `stop()` returns the peak in KB.
 * VmHWM alone would only give the peak since the process started, not the peak of one run.
 */
export function sampleRss(pids, intervalMs = 200) {
  let peakKb = memoryKb(pids()).rssKb;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    peakKb = Math.max(peakKb, memoryKb(pids()).rssKb);
    setTimeout(tick, intervalMs).unref();
  };
  setTimeout(tick, intervalMs).unref();
  return () => {
    stopped = true;
    return Math.max(peakKb, memoryKb(pids()).rssKb);
  };
}
