// The pool phase's driver: starts the workers and the lead workflows with the soak (a few hundred ms apart), holds the
// rest back for the restart's wave, and follows every pool workflow to its end; then stops the workers and reads their
// logs. The wave starts when the restarter is about to kill Shepherd (`beforeKill`): its starts are answered, the pool
// is read, and the kill finds the wave's tasks being offered and handed out while the workers' polls wait. Without a
// restart, or once the regular workload is over (`windDown`), the wave starts at once.
import { sleep, within } from "../../scripts/lib/async.ts";
import type { PoolRow } from "./api-shapes.ts";
import type { ShepherdClient } from "./client.ts";
import type { SoakWorkflow } from "./definitions.ts";
import { followToEnd } from "./follow.ts";
import { POOL_NAME, splitForRestart } from "./pool.ts";
import type { WorkerLog } from "./pool-log.ts";
import { startWorkers } from "./pool-workers.ts";
import type { WorkerKill, WorkerSetup } from "./pool-workers.ts";
import { newResult } from "./results.ts";
import type { WorkflowResult } from "./results.ts";
import { rotation } from "./rotation.ts";
import { startUntilAccepted } from "./starts.ts";

const POLL_MIN_MS = 250;
const POLL_MAX_MS = 1_000;
/** Between two lead starts: the lead's tasks come in a trickle, so the workers' polls mostly wait for them. */
const LEAD_PACE_MS = 400;
/** The kill waits at most this long for the wave's starts to be answered. */
const WAVE_START_MS = 2_000;
/** Tasks the workers take before one of them is killed holding the next (case 29). */
const KILL_AFTER_TASKS = 4;
export const POOL_WORKERS = 3;

export interface PoolDrive {
  client: ShepherdClient;
  workflows: SoakWorkflow[];
  /** Whether a restart is planned: without one nothing is held back. */
  restart: boolean;
  deadline: number;
  workers: Omit<WorkerSetup, "count" | "pool" | "killAfterTasks">;
}

/** The restart's wave: when it started, how many of its starts were answered before the kill, and the pool then. */
export interface PoolWave {
  ids: string[];
  startedAt: number | null;
  /** Started before the kill (null: the wave did not start at a kill). */
  startedBeforeKill: number | null;
  /** The pool as `GET /v1/pools` listed it just before the kill. */
  atKill: PoolRow | null;
}

export interface PoolRun {
  results: WorkflowResult[];
  wave: PoolWave;
  kill: WorkerKill | null;
  logs: WorkerLog[];
  /** The pool's listing once every pool workflow had ended. */
  final: PoolRow | null;
}

export interface PoolPhase {
  done: Promise<PoolRun>;
  openSample: (n: number) => string[];
  /** The restarter's hook: starts the wave and says what the kill will find. */
  beforeKill: () => Promise<string | null>;
  /** The regular workload is over: a wave still held starts now. */
  windDown: () => void;
}

/** No pool workflow: no worker process either. */
const IDLE: PoolPhase = {
  done: Promise.resolve({ results: [], wave: { ids: [], startedAt: null, startedBeforeKill: null, atKill: null }, kill: null, logs: [], final: null }),
  openSample: () => [],
  beforeKill: async () => null,
  windDown: () => {},
};

/** Starts the workers and the lead now; the wave at the kill, or at once without a restart. */
export function drivePool({ client, workflows, restart, deadline, workers: setup }: PoolDrive): PoolPhase {
  if (workflows.length === 0) return IDLE;
  const workers = startWorkers({ ...setup, count: POOL_WORKERS, pool: POOL_NAME, killAfterTasks: KILL_AFTER_TASKS });
  const { lead, wave } = splitForRestart(workflows, restart);
  const open = new Set<string>();
  const waveRecord: PoolWave = { ids: wave.map((wf) => wf.id), startedAt: null, startedBeforeKill: null, atKill: null };
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const waveStarts: Promise<boolean>[] = [];
  const run = async (wf: SoakWorkflow, after: Promise<void>, starts: Promise<boolean>[] = []): Promise<WorkflowResult> => {
    const result = newResult(wf.id, wf.kind);
    await after;
    const started = startUntilAccepted(client, wf.payload, result, { deadline });
    starts.push(started);
    result.started = await started;
    if (!result.started) return result;
    open.add(wf.id);
    await followToEnd(client, result, deadline, { minMs: POLL_MIN_MS, maxMs: POLL_MAX_MS });
    open.delete(wf.id);
    return result;
  };
  const startWave = (): void => {
    waveRecord.startedAt ??= Date.now();
    release();
  };
  if (wave.length === 0) startWave();
  const runs = [...lead.map((wf, i) => run(wf, sleep(i * LEAD_PACE_MS))), ...wave.map((wf) => run(wf, released, waveStarts))];
  const done = Promise.all(runs).then(async (results) => ({ results, wave: waveRecord, kill: workers.kill(), logs: await workers.stop(), final: await poolRow(client) }));
  const sample = rotation();
  return {
    done,
    openSample: (n) => sample([...open], n),
    async beforeKill() {
      if (waveRecord.startedAt !== null) return null;
      startWave();
      // The wave's runs take their turn to start once `released` resolves: let them, then wait for their answers.
      await sleep(0);
      return waveAtKill(client, waveRecord, waveStarts);
    },
    windDown: startWave,
  };
}

/** Waits (bounded) for the wave's starts to be answered, then reads the pool: what the kill will find, for its reason. */
async function waveAtKill(client: ShepherdClient, wave: PoolWave, starts: readonly Promise<boolean>[]): Promise<string> {
  const answered = await within(Promise.all(starts), WAVE_START_MS, null);
  wave.startedBeforeKill = answered ? answered.filter(Boolean).length : null;
  wave.atKill = await poolRow(client);
  const row = wave.atKill;
  return `${wave.ids.length} pool workflows started just before (${answered ? `${wave.startedBeforeKill} answered` : "not all answered"}), the pool then ${row ? `${row.pending} pending, ${row.running} running` : "unread"}`;
}

/** The pool's row of `GET /v1/pools`, or null when it could not be read. */
async function poolRow(client: ShepherdClient): Promise<PoolRow | null> {
  const answer = await client.listPools();
  return answer.value?.pools.find((p) => p.name === POOL_NAME) ?? null;
}
