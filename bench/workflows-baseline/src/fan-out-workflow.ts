// The work of a Shepherd map step, the way a Workflows user writes it: one instance, one `step.do` per item,
// all of them at once under `Promise.all` (Workflows has no bound on items in flight; the runtime's own
// limit on a Worker's simultaneous connections is what paces the calls). Every step.do counts towards the
// instance's step limit (10 000 by default).
import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "cloudflare:workers";
import type { BenchParams } from "./bench-workflow";
import { callRemote, type Json } from "./remote";

export interface FanOutParams {
  items: Json[];
  url: string;
  retry: BenchParams["retry"];
  timeoutMs: number;
}

/** The map step's id in Shepherd's definition, so both engines' items carry the same keys. */
const STEP_ID = "each";

export class FanOutWorkflow extends WorkflowEntrypoint<unknown, FanOutParams> {
  override async run(event: WorkflowEvent<FanOutParams>, step: WorkflowStep) {
    const { items, url, retry, timeoutMs } = event.payload;
    const workflowId = event.instanceId;
    const outputs = await Promise.all(
      items.map((item, index) =>
        step.do(`${STEP_ID}-${index}`, { retries: retry, timeout: timeoutMs }, async (ctx) =>
          callRemote({ url, workflowId, stepId: STEP_ID, idempotencyKey: `${workflowId}:${STEP_ID}:${index}`, attempt: ctx.attempt, body: { n: index, item } }),
        ),
      ),
    );
    // Each item's output is already kept by its step; the instance's output stays small at any item count.
    return { finishedAt: Date.now(), items: outputs.length };
  }
}
