// The work of a Shepherd workflow of sequential steps: one `step.do` per step, one after the other. A remote that
// answers 202 reports later on the step's task token (index.ts turns the report into an event): the step then
// waits for that event, as a Workflows user waits for a callback.
import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "cloudflare:workers";
import { callRemote, type Json } from "./remote";

export interface BenchParams {
  steps: { id: string; url: string }[];
  /** Workflows' retry config; the bench sets it to the equivalent of the Shepherd steps' policy. */
  retry: { limit: number; delay: number; backoff: "constant" | "linear" | "exponential" };
  /** Per-attempt timeout, the counterpart of Shepherd's startToCloseMs. */
  timeoutMs: number;
}

/** A step's task token: the instance and the step, which the report route splits again. */
export const taskToken = (instanceId: string, stepId: string): string => `${instanceId}.${stepId}`;
/** The event a step's report becomes. */
export const reportType = (stepId: string): string => `reported-${stepId}`;
/** The bench remote's 202 body. */
const isAccepted = (answer: Json): boolean => typeof answer === "object" && answer !== null && !Array.isArray(answer) && answer.accepted === true;

export class BenchWorkflow extends WorkflowEntrypoint<unknown, BenchParams> {
  override async run(event: WorkflowEvent<BenchParams>, step: WorkflowStep) {
    const { steps, retry, timeoutMs } = event.payload;
    const workflowId = event.instanceId;
    const outputs: Record<string, Json> = {};
    for (const spec of steps) {
      const answer = await step.do(spec.id, { retries: retry, timeout: timeoutMs }, async (ctx) =>
        callRemote({
          url: spec.url, workflowId, stepId: spec.id, idempotencyKey: `${workflowId}:${spec.id}`, attempt: ctx.attempt,
          body: { workflow: workflowId, step: spec.id }, taskToken: taskToken(workflowId, spec.id),
        }),
      );
      outputs[spec.id] = isAccepted(answer) ? (await step.waitForEvent<Json>(`${spec.id} reported`, { type: reportType(spec.id), timeout: timeoutMs })).payload : answer;
    }
    // Stamped when the last step's result is back, like Shepherd's endedAt: the bench's precise completion time.
    return { finishedAt: Date.now(), outputs };
  }
}
