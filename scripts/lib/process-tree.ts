// The process tree as Linux's /proc shows it: a process's parent, name, CPU time and start time, and every
// process below a given one. Read-only; the tools use it to find a child's strays before stopping it
// (process-groups.ts) and, in the bench, to measure workerd's CPU and memory.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** USER_HZ: /proc/<pid>/stat counts CPU and start time in these ticks (100 per second on Linux). */
export const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * { pid, ppid, comm, cpuMs, startTicks } from /proc/<pid>/stat, or undefined when the process is gone.
 * startTicks (when it started, since boot) tells a process apart from a later one that reused its pid.
 */
export function readStat(pid) {
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
  // Fields after comm start at field 3 (state): ppid is field 4, utime and stime 14 and 15, starttime 22.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { pid, ppid: Number(fields[1]), comm, cpuMs: (ticks * 1000) / CLOCK_TICKS, startTicks: Number(fields[19]) };
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
