// The final word of each workflow once the soak is over: its object's view and whole history, read for every
// workflow the drivers started (and those they could not), with the driver's record beside it. Every check and
// measurement reads these.
import { mapPool } from "../../scripts/lib/async.ts";
import type { ShepherdClient } from "./client.ts";
import type { DevWorkflow, HistoryEvent, WorkflowView } from "./api-shapes.ts";
import type { LanguageRecord } from "./language.ts";
import type { WorkflowResult } from "./results.ts";

export interface Final {
  id: string;
  kind: string;
  started: boolean;
  /** null when the object could not be read (never started, or no answer). */
  view: WorkflowView | null;
  readStatus: number;
  events: HistoryEvent[];
  language: LanguageRecord | undefined;
  /** The alarm check's reading of the object's alarm. */
  dev?: DevWorkflow;
}

/** One workflow as the drivers leave it: at least its id, family and whether it started. */
export type Followed = Pick<WorkflowResult, "id" | "kind" | "started" | "language">;

export function readFinals(client: ShepherdClient, results: readonly Followed[]): Promise<Final[]> {
  return mapPool(results, 10, async (result: Followed): Promise<Final> => {
    const res = await client.getWorkflow(result.id);
    const history = res.status === 200 ? await client.getHistory(result.id) : { events: [] };
    return { id: result.id, kind: result.kind, started: result.started, view: res.status === 200 ? res.value : null, readStatus: res.status, events: history.events, language: result.language };
  });
}
