import type { ActedBy, CommandCall, CommandReply, CommandRequest } from "../domain/language/operator-commands";
import { schedulerFor } from "./client";

/**
 * Runs one operator command on one of a tenant's workflows for whoever asked (`by`: who, and why): the command
 * routes' way in, and that of any caller acting for a token, as a bulk job does for the token that created it.
 * The history records `by` with what the command did. A workflow the tenant does not have answers `not_found`.
 */
export async function runOperatorCommand(env: Env, tenant: string, workflowId: string, call: CommandCall, by: ActedBy): Promise<CommandReply> {
  const request = { ...call, by } as CommandRequest;
  return schedulerFor(env, tenant, workflowId).command(request);
}
