// The regular workload's driver: starts the workflows with bounded concurrency, follows each to a terminal
// status, sends the language workflows' events, and restarts Shepherd once (restart-timing.ts says when).
/* global setInterval, clearInterval */
import { mapPool } from "../../scripts/lib/async.ts";
import type { ShepherdClient } from "./client.ts";
import type { SoakWorkflow } from "./definitions.ts";
import { eventSender } from "./event-timing.ts";
import { followToEnd } from "./follow.ts";
import type { ViewHandler } from "./follow.ts";
import { newLanguageRecord, prepareStart } from "./language.ts";
import { restartTrigger } from "./restart-timing.ts";
import type { RestartTrigger } from "./restart-timing.ts";
import { newResult } from "./results.ts";
import type { WorkflowResult } from "./results.ts";
import { startUntilAccepted } from "./starts.ts";

const POLL_MIN_MS = 200;
const POLL_MAX_MS = 1_000;

export interface WorkloadDrive {
  client: ShepherdClient;
  workflows: SoakWorkflow[];
  concurrency: number;
  deadline: number;
  /** Starts before the restart; null: no restart. */
  restartAfter: number | null;
  /** Resolves with a reason when the restart should come before `restartAfter` starts. */
  restartSignal?: Promise<string>;
  restart: (reason: string) => Promise<void>;
  onStarted?: (id: string) => void;
  onEnded?: (id: string) => void;
  onProgress?: (counts: { started: number; done: number; total: number }) => void;
}

/** One lane's view of the run: the driver's options, the restart and how many have started. */
interface Lanes extends WorkloadDrive {
  restarts: RestartTrigger;
  started: { count: number };
}

/**
 * Starts and follows every workflow, `concurrency` at a time, until all are terminal or `deadline` passes.
 * After `restartAfter` starts, or once `restartSignal` resolves if that comes first, new starts pause while
 * `restart()` runs (pollers keep going and see the outage). A signal that comes after the workload ended is
 * ignored, so no restart outlives the driver. `onStarted`/`onEnded` tell which workflows are in flight;
 * `onProgress` gets counts for the console.
 */
export async function driveWorkload(drive: WorkloadDrive): Promise<WorkflowResult[]> {
  const { client, workflows, concurrency, restartAfter, restartSignal, onProgress } = drive;
  const pairs = workflows.map((wf) => ({ wf, result: newResult(wf.id, wf.kind) }));
  const results = pairs.map((pair) => pair.result);
  const restarts = restartTrigger({ client, results, enabled: restartAfter !== null, restart: drive.restart });
  restartSignal?.then((reason) => restarts.trigger(reason));
  const lanes: Lanes = { ...drive, restarts, started: { count: 0 } };
  const progress = setInterval(() => {
    onProgress?.({ started: lanes.started.count, done: results.filter((r) => r.terminal).length, total: workflows.length });
  }, 5_000);
  await mapPool(pairs, concurrency, ({ wf, result }: { wf: SoakWorkflow; result: WorkflowResult }) => runOne(lanes, wf, result));
  // A restart still running when the lanes ran out of time is awaited, so nothing is left behind.
  await restarts.finish();
  clearInterval(progress);
  return results;
}

/** Starts one workflow (after the restart, if one is under way) and follows it to its end. */
async function runOne(lanes: Lanes, wf: SoakWorkflow, result: WorkflowResult): Promise<void> {
  const { client, deadline, restartAfter, restarts } = lanes;
  const gate = restarts.gate();
  if (gate) await gate;
  if (wf.language) {
    result.language = newLanguageRecord(wf.id, wf.language);
    prepareStart(wf, result.language);
  }
  result.started = await startUntilAccepted(client, wf.payload, result, { deadline });
  if (!result.started) return;
  lanes.started.count += 1;
  lanes.onStarted?.(wf.id);
  if (restartAfter !== null && lanes.started.count >= restartAfter) restarts.trigger(`${lanes.started.count}/${lanes.workflows.length} regular workflows started`);
  await followToEnd(client, result, deadline, { minMs: POLL_MIN_MS, maxMs: POLL_MAX_MS, onView: await languageHandler(lanes, wf, result) });
  lanes.onEnded?.(wf.id);
}

/** A language workflow's readings are kept (the restart's timing reads them) and may send its late event. */
async function languageHandler(lanes: Lanes, wf: SoakWorkflow, result: WorkflowResult): Promise<ViewHandler | undefined> {
  const record = result.language;
  if (!wf.language || !record) return undefined;
  const late = await eventSender(wf, wf.language, record, { client: lanes.client, deadline: lanes.deadline, restartPending: lanes.restarts.pending });
  return (view) => {
    result.lastView = view;
    return late?.(view);
  };
}
