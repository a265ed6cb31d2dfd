// The work of a Shepherd workflow of sequential steps: one `step.do` per step, one after the other.
import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "cloudflare:workers";
import { callRemote, type Json } from "./remote";

export interface BenchParams {
  steps: { id: string; url: string }[];
  /** Workflows' retry config; the bench sets it to the equivalent of the Shepherd steps' policy. */
  retry: { limit: number; delay: number; backoff: "constant" | "linear" | "exponential" };
  /** Per-attempt timeout, the counterpart of Shepherd's startToCloseMs. */
  timeoutMs: number;
}

export class BenchWorkflow extends WorkflowEntrypoint<unknown, BenchParams> {
  override async run(event: WorkflowEvent<BenchParams>, step: WorkflowStep) {
    const { steps, retry, timeoutMs } = event.payload;
    const workflowId = event.instanceId;
    const outputs: Record<string, Json> = {};
    for (const spec of steps) {
      outputs[spec.id] = await step.do(spec.id, { retries: retry, timeout: timeoutMs }, async (ctx) =>
        callRemote({ url: spec.url, workflowId, stepId: spec.id, idempotencyKey: `${workflowId}:${spec.id}`, attempt: ctx.attempt, body: { workflow: workflowId, step: spec.id } }),
      );
    }
    // Stamped when the last step's result is back, like Shepherd's endedAt: the bench's precise completion time.
    return { finishedAt: Date.now(), outputs };
  }
}
