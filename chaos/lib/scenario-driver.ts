// The driver of the supervision scenarios' small families (stalls, lost answers, the breaker's batch): each
// workflow is started at its own time (the seed's, or the outage's) and read until it ends. Few workflows, so
// each is polled on its own, like the regular workload's, but backing off to every 3 s: most of them wait a
// while (a stall, a parked step), and the harness's reads must not be what loads the engine.
import { sleep } from "../../scripts/lib/async.ts";
import type { ShepherdClient } from "./client.ts";
import type { SoakWorkflow } from "./definitions.ts";
import { followToEnd } from "./follow.ts";
import { newResult } from "./results.ts";
import type { WorkflowResult } from "./results.ts";
import { startUntilAccepted } from "./starts.ts";

const POLL_MIN_MS = 250;
const POLL_MAX_MS = 3_000;

export interface FamilyDrive {
  client: ShepherdClient;
  workflows: SoakWorkflow[];
  /** When to start each (epoch ms). */
  startAt: (wf: SoakWorkflow) => number;
  deadline: number;
  onStarted?: (id: string) => void;
  onEnded?: (id: string) => void;
}

/**
 * Starts every workflow at `startAt(wf)` (all at once when they agree) and follows each to a terminal status
 * or `deadline`. Resolves to one result per workflow, in the shape run.ts reads for every family.
 */
export function driveFamily({ client, workflows, startAt, deadline, onStarted, onEnded }: FamilyDrive): Promise<WorkflowResult[]> {
  return Promise.all(
    workflows.map(async (wf) => {
      const result = newResult(wf.id, wf.kind);
      await sleep(Math.max(0, Math.min(startAt(wf), deadline) - Date.now()));
      result.started = await startUntilAccepted(client, wf.payload, result, { deadline });
      if (!result.started) return result;
      onStarted?.(wf.id);
      await followToEnd(client, result, deadline, { minMs: POLL_MIN_MS, maxMs: POLL_MAX_MS });
      onEnded?.(wf.id);
      return result;
    }),
  );
}
