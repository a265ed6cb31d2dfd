// The soak's bulk phase (reliability case 34; contract v1.2, "Bulk operations"): a family of workflows of one
// definition that wait for an event no one sends, and one bulk job that cancels them all. The job is created just
// before Shepherd's restart (the restarter's `beforeKill`), once it has acted on a few, so the kill finds it part
// way; every one of them must end cancelled exactly once, the job's counts must add up, and the front door must
// answer throughout.
import { familyId, familyWorkflow } from "./definitions.ts";
import type { SoakWorkflow } from "./definitions.ts";

export const BULK_KIND = "bulk";
/** The one definition of the family: the job's filter (with status running). */
export const BULK_NAME = "chaos-bulk";
/**
 * 500 in the full soak: on two cores, 2 000 waiting workflows started beside the burst's 2 000 overload the runtime
 * (heartbeats and reports late by seconds) and fail the load-sensitive checks of every other phase. Case 34's 2 000 is
 * `--bulk-workflows 2000`, run on its own.
 */
export const DEFAULT_BULK_WORKFLOWS: Readonly<Record<"soak" | "quick", number>> = { soak: 500, quick: 50 };
/** Longer than any run: only the job ends these workflows. */
const WAIT_MS = 3_600_000;
const BULK_REASON = "chaos soak: case 34";

/** `count` workflows `chaos-<seed>-bulk-NNNN`, each one step that waits for an event no one sends. */
export function buildBulkWorkflows({ seed, count }: { seed: string; count: number }): SoakWorkflow[] {
  return Array.from({ length: count }, (_, i) => ({
    ...familyWorkflow(BULK_KIND, {
      id: familyId(seed, BULK_KIND, i),
      input: { n: i },
      definition: { name: BULK_NAME, steps: [{ id: "hold", waitForEvent: { event: "never-sent", timeoutMs: WAIT_MS, onTimeout: "fail" } }] },
    }),
    // Cancelled by design: left out of the progress threshold.
    closedByDesign: true,
  }));
}

/** The body of `POST /v1/bulk` the phase sends: cancel every running workflow of the family. */
export const bulkCancelRequest = { action: "cancel", filter: { name: BULK_NAME, status: "running" }, reason: BULK_REASON } as const;
