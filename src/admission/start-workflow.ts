/**
 * Starting a workflow, for everything that starts one from outside a workflow's object: `POST /v1/workflows` and a
 * schedule's fires. The request is made by start-request.ts (shared with a `workflow` step's child start), then
 * the new workflow's object is asked, through the retrying client.
 */
import type { StartWorkflowInput } from "../domain/language/definition";
import { schedulerFor } from "../workflow/client";
import { startRequestFor, type StartOptions, type StartOutcome } from "./start-request";

export { runnableDefinition, type StartOptions, type StartOutcome, type StartRefusal } from "./start-request";

/**
 * Starts the workflow `body` describes for `tenant`, idempotent by id: the same id and body again answers the
 * existing workflow (`created: false`), another body under that id is a `conflict`.
 */
export async function startWorkflowRun(env: Env, tenant: string, body: StartWorkflowInput, options: StartOptions = {}): Promise<StartOutcome> {
  const prepared = await startRequestFor(env, tenant, body, options);
  if (!prepared.ok) return prepared;
  return schedulerFor(env, tenant, prepared.request.id).start(prepared.request);
}
