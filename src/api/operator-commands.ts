// The operator commands' routes, one per row of the commands' table (domain/contract.ts for the route and its
// words, domain/operator-commands.ts for the body): a command added there gets its route, its OpenAPI entry and
// its client method without a line here.
import { createRoute, OpenAPIHono, type z } from "@hono/zod-openapi";
import { OPERATOR_COMMANDS, type OperatorCommandContract, type OperatorCommandName } from "../domain/contract";
import { COMMAND_RULES, type ActedBy, type CommandCall } from "../domain/language/operator-commands";
import { runOperatorCommand } from "../workflow/operator-command";
import type { AppEnv } from "./app-env";
import { workflowRejectionToError } from "./errors";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";
import { StepParamsSchema, WorkflowParamsSchema, WorkflowViewSchema } from "./schemas";
import { workflowOr404 } from "./workflow-or-404";

const accepted = { 202: jsonContent(WorkflowViewSchema, "Accepted: the workflow after the action"), ...errorResponses(400, 401, 404, 409, 413, 415, 429, 503) };

const COMMAND_NAMES = Object.keys(OPERATOR_COMMANDS) as OperatorCommandName[];

function commandRoute(name: OperatorCommandName) {
  const row: OperatorCommandContract = OPERATOR_COMMANDS[name];
  const body: z.ZodType = COMMAND_RULES[name].body;
  const unchanged = row.unchanged && { 200: jsonContent(WorkflowViewSchema, row.unchanged.description) };
  return createRoute({
    method: "post",
    path: row.path,
    operationId: row.operationId,
    summary: row.summary,
    security: BEARER_AUTH,
    request: { params: row.path.includes("{stepId}") ? StepParamsSchema : WorkflowParamsSchema, ...jsonBody(body, row.bodyRequired === true) },
    responses: { ...unchanged, ...accepted },
  });
}

/**
 * The call from a validated request: the step from the path, the body (none sent: `{}`) but for its reason,
 * which goes with who acted.
 */
function commandCall(name: OperatorCommandName, param: { stepId?: string }, json: { reason?: string }): { call: CommandCall; reason?: string } {
  const { reason, ...body } = json;
  const call = { command: name, ...(param.stepId === undefined ? {} : { stepId: param.stepId }), body } as CommandCall;
  return reason === undefined ? { call } : { call, reason };
}

export const operatorCommandRoutes = new OpenAPIHono<AppEnv>();
for (const name of COMMAND_NAMES) {
  operatorCommandRoutes.openapi(commandRoute(name), async (c) => {
    const param: { id: string; stepId?: string } = c.req.valid("param");
    const { call, reason } = commandCall(name, param, (c.req.valid("json" as never) as { reason?: string } | undefined) ?? {});
    const by: ActedBy = { actor: c.get("actor"), ...(reason === undefined ? {} : { reason }) };
    const outcome = await runOperatorCommand(c.env, c.get("tenant"), param.id, call, by);
    if (!outcome.ok) throw workflowRejectionToError(param.id, outcome);
    // 202, or 200 when the command changed nothing (pausing a paused workflow).
    return c.json(await workflowOr404(c.env, c.get("tenant"), param.id), outcome.unchanged ? 200 : 202);
  });
}
