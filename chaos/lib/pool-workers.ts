// The pool phase's worker processes: a few chaos/pool-worker.ts children, each in its own process group (so the run's
// end, a signal or the watchdog stops them like wrangler), each logging to its own file in the run's temp dir. Case 29:
// once the workers have taken a few tasks, the next one that announces a task it took is SIGKILLed at once, holding it,
// and a fresh worker starts in its place.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { crashGroup, spawnGroup, stopGroup } from "../../scripts/lib/process-groups.ts";
import type { ProcessGroup } from "../../scripts/lib/process-groups.ts";
import { readWorkerLog } from "./pool-log.ts";
import type { WorkerLog } from "./pool-log.ts";

const WORKER_SCRIPT = fileURLToPath(new URL("../pool-worker.ts", import.meta.url));

export interface WorkerSetup {
  count: number;
  /** Where the workers' logs go (the run's temp dir: kept with --keep). */
  dir: string;
  shepherdUrl: string;
  remoteUrl: string;
  pool: string;
  token: string;
  /** Tasks the workers must have taken before one is killed holding the next (null: none is killed). */
  killAfterTasks: number | null;
  log: (message: string) => void;
}

/** The worker SIGKILLed while it held a task, and the one started in its place. */
export interface WorkerKill {
  workerId: string;
  at: number;
  replacement: string;
}

export interface PoolWorkers {
  kill: () => WorkerKill | null;
  /** Stops every worker still running and reads every worker's log (the killed one's too). */
  stop(): Promise<WorkerLog[]>;
}

/** Starts `count` workers now. */
export function startWorkers(setup: WorkerSetup): PoolWorkers {
  const procs = new Map<string, ProcessGroup>();
  const logFile = (id: string): string => join(setup.dir, `${id}.jsonl`);
  let taken = 0;
  let kill: WorkerKill | null = null;
  const spawnOne = (): string => {
    const id = `chaos-worker-${procs.size + 1}`;
    const args = [WORKER_SCRIPT, "--shepherd", setup.shepherdUrl, "--remote", setup.remoteUrl, "--pool", setup.pool, "--id", id, "--log", logFile(id)];
    const proc = spawnGroup(process.execPath, args, { env: { ...process.env, SHEPHERD_TOKEN: setup.token }, logFile: join(setup.dir, `${id}.out`), title: `pool worker ${id}` });
    procs.set(id, proc);
    createInterface({ input: proc.child.stdout }).on("line", (line) => onAnnounced(id, line));
    return id;
  };
  const onAnnounced = (id: string, line: string): void => {
    taken += holdingCount(line);
    if (kill || setup.killAfterTasks === null || taken <= setup.killAfterTasks) return;
    const proc = procs.get(id);
    if (!proc) return;
    // The worker wrote the poll to its log before it announced the task: the kill cannot lose the hand-out.
    void crashGroup(proc);
    kill = { workerId: id, at: Date.now(), replacement: spawnOne() };
    setup.log(`pool: SIGKILLed ${id} holding a task; ${kill.replacement} started in its place`);
  };
  for (let i = 0; i < setup.count; i++) spawnOne();
  return {
    kill: () => kill,
    async stop() {
      await Promise.all([...procs.values()].map((proc) => stopGroup(proc)));
      return [...procs.keys()].map((id) => readWorkerLog(id, readText(logFile(id))));
    },
  };
}

/** How many tasks an announcement line names (`{"holding": [...]}`); 0 for any other output. */
export function holdingCount(line: string): number {
  try {
    const holding: unknown = (JSON.parse(line) as { holding?: unknown }).holding;
    return Array.isArray(holding) ? holding.length : 0;
  } catch {
    return 0;
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
