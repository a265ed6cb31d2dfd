// CPU and memory of the engines under test, read from /proc: the workerd processes a wrangler process
// started, their summed CPU time, and their resident memory, current, peak, and sampled over one run.
import { readFileSync } from "node:fs";
import { sampleEvery } from "../../scripts/lib/async.ts";
import { descendants, readStat } from "../../scripts/lib/process-tree.ts";

/** The workerd processes that a wrangler process spawned (the runtime that runs the Worker). */
export function workerdPids(root: number | undefined): number[] {
  return root === undefined ? [] : descendants(root).filter((pid) => readStat(pid)?.comm === "workerd");
}

/** Sum of user+system CPU of these processes, in ms (processes that exited are left out). */
export function cpuMs(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + (readStat(pid)?.cpuMs ?? 0), 0);
}

/** { rssKb, hwmKb }: current and peak resident memory, summed over these processes. */
export function memoryKb(pids: readonly number[]): { rssKb: number; hwmKb: number } {
  let rssKb = 0;
  let hwmKb = 0;
  for (const pid of pids) {
    let status: string;
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
export function sampleRss(pids: () => readonly number[], intervalMs = 200): () => number {
  let peakKb = memoryKb(pids()).rssKb;
  const sampler = sampleEvery(intervalMs, () => {
    peakKb = Math.max(peakKb, memoryKb(pids()).rssKb);
  });
  return () => {
    void sampler.stop();
    return Math.max(peakKb, memoryKb(pids()).rssKb);
  };
}
