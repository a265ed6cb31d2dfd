import { schedulerFor } from "../workflow/client";
import { noSuchWorkflow } from "./errors";

/** The workflow as its object sees it, or a 404 when this tenant has no such workflow. */
export async function workflowOr404(env: Env, tenant: string, id: string) {
  const workflow = await schedulerFor(env, tenant, id).describe();
  if (!workflow) throw noSuchWorkflow(id);
  return workflow;
}
