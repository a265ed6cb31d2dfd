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

/** What /proc/<pid>/stat says of a process (or of one of its threads). */
export interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  /** User and system CPU time. */
  cpuMs: number;
  /** When it started, since boot: tells a process apart from a later one that reused its pid. */
  startTicks: number;
}

/** The process's stat, or undefined when the process is gone. */
export function readStat(pid: number): ProcStat | undefined {
  const stat = statAt(String(pid));
  return stat && { pid, ...stat };
}

/** A thread's stat (the file has the process's format), or undefined when it is gone. */
export function readThreadStat(pid: number, tid: string): Omit<ProcStat, "pid"> | undefined {
  return statAt(`${pid}/task/${tid}`);
}

function statAt(dir: string): Omit<ProcStat, "pid"> | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${dir}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // comm is in parentheses and may itself contain spaces or parentheses: split after the last ')'.
  const close = text.lastIndexOf(")");
  const comm = text.slice(text.indexOf("(") + 1, close);
  const fields = text.slice(close + 2).split(" ");
  // Fields after comm start at field 3 (state): ppid is field 4, utime and stime 14 and 15, starttime 22.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { ppid: Number(fields[1]), comm, cpuMs: (ticks * 1000) / CLOCK_TICKS, startTicks: Number(fields[19]) };
}

function allPids(): number[] {
  return readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number);
}

/** Every process below `root` (not root itself), found by walking parent links in /proc. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of allPids()) {
    const stat = readStat(pid);
    if (!stat) continue;
    const siblings = children.get(stat.ppid) ?? [];
    children.set(stat.ppid, siblings);
    siblings.push(pid);
  }
  const found: number[] = [];
  const stack = [root];
  for (let parent = stack.pop(); parent !== undefined; parent = stack.pop()) {
    for (const pid of children.get(parent) ?? []) {
      found.push(pid);
      stack.push(pid);
    }
  }
  return found;
}
