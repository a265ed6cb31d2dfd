/**
 * How a bulk job reaches each workflow: through the workflow object's own RPC, as the single operator routes do
 * (`runOperatorCommand`, and `sendEvent` as src/api/events.ts calls it), for the token that created the job, so a
 * bulk cancel is exactly that operator's cancel, recorded in the history with their name and reason.
 */
import { actionLanded, bulkCallOf, outcomeOf, type BulkOutcome } from "../domain/bulk/actions";
import type { BulkJobSpec } from "../domain/bulk/job";
import { schedulerFor } from "../workflow/client";
import { runOperatorCommand } from "../workflow/operator-command";

/** A workflow's history is read this many events at a time (the history route's own page). */
const HISTORY_PAGE = 1_000;
/** The most pages read to settle one uncertain action: a workflow with a longer history is read no further. */
const HISTORY_PAGES_READ = 50;

export interface BulkCaller {
  /** Makes the job's call on one workflow; throws when the object could not be reached (the call may have landed). */
  act(workflowId: string): Promise<BulkOutcome>;
  /** Whether the job's action shows in the workflow's history since `since`; undefined for an event (see actions.ts). */
  landed(workflowId: string, since: number): Promise<boolean | undefined>;
}

export function bulkCaller(env: Env, spec: BulkJobSpec): BulkCaller {
  const call = bulkCallOf(spec);
  return {
    async act(workflowId) {
      if (call.kind === "command") return outcomeOf(await runOperatorCommand(env, spec.tenant, workflowId, call.call, call.by));
      return outcomeOf(await schedulerFor(env, spec.tenant, workflowId).sendEvent(call.event, call.by));
    },
    async landed(workflowId, since) {
      if (spec.action === "event") return undefined;
      const scheduler = schedulerFor(env, spec.tenant, workflowId);
      let after = 0;
      for (let page = 0; page < HISTORY_PAGES_READ; page++) {
        const events = await scheduler.history(after, HISTORY_PAGE);
        if (actionLanded(spec.action, call.by, events, since)) return true;
        const last = events.at(-1);
        if (!last || events.length < HISTORY_PAGE) return false;
        after = last.seq;
      }
      return false;
    },
  };
}
