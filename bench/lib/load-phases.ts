// What the load cases (throughput, burst) do the same way around a run of many workflows: follow it at the
// remote instead of polling the engine while it works, wait for every workflow's last step, and measure what
// one status read costs, to take the read-back out of the run's CPU figure.
import { mapPool, sleep } from "../../scripts/lib/async.ts";
import type { FakeRemote } from "../../scripts/lib/fake-remote.ts";
import type { Engine } from "./engines/engine.ts";
import { cpuMs } from "./proc-readings.ts";
import { STEPS_PER_WORKFLOW } from "./workload.ts";

/** Nothing reached the remote for this long: the engine has nothing left to do (or is stuck); stop waiting. */
const STALL_MS = 30_000;

/** A run as the remote sees it. */
export interface RemoteProgress {
  /** Every step key seen: the executed steps. */
  stepsSeen: Set<string>;
  /** Every workflow whose last step arrived. */
  finished: Set<string>;
  /** When anything of the run last arrived. */
  lastProgressAt: number;
  stop(): void;
}

/** Follows the requests whose Idempotency-Key starts with `prefix` (the run's ids) until stop(). */
export function watchRemote(remote: FakeRemote, prefix: string): RemoteProgress {
  const lastStep = `:s${STEPS_PER_WORKFLOW}`;
  const onRequest = (key: string): void => {
    if (!key.startsWith(prefix)) return;
    progress.lastProgressAt = Date.now();
    progress.stepsSeen.add(key);
    if (key.endsWith(lastStep)) progress.finished.add(key);
  };
  const progress: RemoteProgress = {
    stepsSeen: new Set(),
    finished: new Set(),
    lastProgressAt: Date.now(),
    stop: () => remote.events.off("request", onRequest),
  };
  remote.events.on("request", onRequest);
  return progress;
}

/** Until the remote saw every started workflow's last step, nothing arrived for STALL_MS, or the deadline. */
export async function waitForLastSteps(progress: RemoteProgress, started: number, deadline: number): Promise<void> {
  while (progress.finished.size < started && Date.now() < deadline && Date.now() - progress.lastProgressAt < STALL_MS) {
    await sleep(50);
  }
}

/** The CPU of one status read, measured by reading every workflow again now that nothing else runs. */
export async function cpuPerStatusRead(engine: Engine, pids: readonly number[], ids: readonly string[], concurrency: number): Promise<number> {
  const before = cpuMs(pids);
  await mapPool(ids, concurrency, (id) => engine.readStatus(id).catch(() => undefined));
  return (cpuMs(pids) - before) / ids.length;
}

/** Ends the workflows a run cut short left running, so they do not weigh on the next measurement. */
export async function cancelAll(engine: Engine, ids: readonly string[], concurrency: number): Promise<void> {
  await mapPool(ids, concurrency, (id) => engine.cancel(id).catch(() => undefined));
}
