// What /proc says about the workerd processes of one `wrangler dev`, for --profile: which one runs the
// Worker (the runtime, started with an inspector) and which is wrangler's proxy, the runtime's own inspector
// port (it picks one at random, and only that inspector lists every isolate), and CPU time per process and
// per thread over a span of time.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { readStat, readThreadStat } from "../../scripts/lib/process-tree.ts";
import { inspectorTargets } from "./inspector.ts";
import type { InspectorTarget } from "./inspector.ts";

const isRuntime = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--inspector-addr");
  } catch {
    return false;
  }
};

/** What a workerd process of `wrangler dev` is: the one with an inspector runs the Worker; the other is wrangler's proxy. */
export const processRole = (pid: number): string => (isRuntime(pid) ? "runtime (the Worker and the local emulations)" : "wrangler's proxy");

/** The TCP ports a process listens on, from its socket inodes and /proc/net/tcp{,6}. */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // Closed meanwhile.
    }
  }
  const ports: number[] = [];
  for (const table of ["tcp", "tcp6"]) {
    let lines: string[];
    try {
      lines = readFileSync(`/proc/${pid}/net/${table}`, "utf8").trim().split("\n").slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; field 9 is the socket's inode.
      if (fields[3] === "0A" && inodes.has(fields[9] ?? "")) ports.push(parseInt(fields[1]?.split(":")[1] ?? "", 16));
    }
  }
  return ports;
}

/**
 * { port, targets } of the runtime's own inspector: the listening port of the runtime process whose /json
 * lists workerd's isolates (ids like `core:user:<worker>`, `queues:queue:<name>`, `d1:db`).
 */
export async function runtimeInspector(pids: readonly number[]): Promise<{ port: number; targets: InspectorTarget[] }> {
  for (const pid of pids.filter(isRuntime)) {
    for (const port of listeningPorts(pid)) {
      const targets = await inspectorTargets(port, { timeoutMs: 2_000 }).catch(() => undefined);
      if (targets?.some((target) => /^core:/.test(target.id))) return { port, targets };
    }
  }
  throw new Error("found no runtime inspector among the workerd processes");
}

/**
 * CPU ms of a process's threads, summed by thread name: workerd runs every isolate's JavaScript and its own
 * I/O on one thread, so what the others (V8's helpers: concurrent GC, compilers, the profiler's own thread)
 * took is in no isolate's profile.
 */
function threadCpuOf(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tids) {
    const stat = readThreadStat(pid, tid);
    if (stat) byName.set(stat.comm, (byName.get(stat.comm) ?? 0) + stat.cpuMs);
  }
  return byName;
}

/** One workerd process's CPU over a span, and its threads' (largest first). */
export interface ProcessCpu {
  pid: number;
  role: string;
  cpuMs: number;
  threads: Array<{ name: string; cpuMs: number }>;
}

/** Starts counting the CPU of these processes; the function it returns gives each one's for the span since. */
export function cpuSpan(pids: readonly number[]): () => ProcessCpu[] {
  const before = new Map(pids.map((pid) => [pid, { cpuMs: readStat(pid)?.cpuMs ?? 0, threads: threadCpuOf(pid) }]));
  return () =>
    pids.map((pid) => ({
      pid,
      role: processRole(pid),
      cpuMs: (readStat(pid)?.cpuMs ?? 0) - (before.get(pid)?.cpuMs ?? 0),
      threads: [...threadCpuOf(pid)]
        .map(([name, cpuMs]) => ({ name, cpuMs: cpuMs - (before.get(pid)?.threads.get(name) ?? 0) }))
        .filter((thread) => thread.cpuMs > 0)
        .sort((a, b) => b.cpuMs - a.cpuMs),
    }));
}
