// CPU used on this machine by processes that are not the bench's own (the harness, wrangler, workerd).
// Other sessions may share the machine; on a small one their load moves every latency and throughput
// figure, so the bench waits for a quiet moment before each measurement and records what it could not avoid.
/* global process */
import { readFileSync } from "node:fs";
import { sleep } from "../../scripts/lib/async.ts";
import { descendants } from "../../scripts/lib/process-tree.ts";
import { cpuMs } from "./proc-readings.ts";

const TICK_MS = 10; // /proc/stat counts USER_HZ ticks, 100 per second on Linux.

/** Busy CPU time of the whole machine so far, in ms (all cores; idle and iowait excluded). */
function machineBusyMs(): number {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0); // user..steal; guest is inside user
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return (total - idle) * TICK_MS;
}

/** CPU time of the bench process and everything it started, in ms. */
function ownMs(): number {
  return cpuMs([process.pid, ...descendants(process.pid)]);
}

/** Starts watching; the returned function gives other processes' CPU since then, in % of one core. */
export function watchOtherLoad(): () => number {
  const startedAt = Date.now();
  const busy = machineBusyMs();
  const own = ownMs();
  return () => {
    const elapsed = Math.max(1, Date.now() - startedAt);
    const other = machineBusyMs() - busy - (ownMs() - own);
    return Math.max(0, (100 * other) / elapsed);
  };
}

/**
 * Waits (at most maxWaitMs) until other processes used under thresholdPct of one core over a 1 s window.
 * Returns the last window's figure, so the caller can say when it gave up waiting.
 */
export async function waitForQuiet({ maxWaitMs = 60_000, thresholdPct = 25 }: { maxWaitMs?: number; thresholdPct?: number } = {}): Promise<number> {
  const deadline = Date.now() + maxWaitMs;
  for (;;) {
    const stop = watchOtherLoad();
    await sleep(1_000);
    const pct = stop();
    if (pct < thresholdPct || Date.now() >= deadline) return pct;
  }
}
