// The operator commands' routes, one per row of the commands' table (domain/contract.ts for the route and its
// words, domain/operator-commands.ts for the body): a command added there gets its route, its OpenAPI entry and
// its client method without a line here.
import { createRoute, OpenAPIHono, type z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { OPERATOR_COMMANDS, type OperatorCommandContract, type OperatorCommandName } from "../domain/contract";
import { COMMAND_RULES, type CommandRequest } from "../domain/language/operator-commands";
import { schedulerFor } from "../workflow/client";
import type { AppEnv } from "./app-env";
import { workflowRejectionToError } from "./errors";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";
import { StepParamsSchema, WorkflowParamsSchema, WorkflowViewSchema } from "./schemas";
import { workflowOr404 } from "./workflow-or-404";

const accepted = { 202: jsonContent(WorkflowViewSchema, "Accepted: the workflow after the action"), ...errorResponses(400, 401, 404, 409, 413, 429, 503) };

const COMMAND_NAMES = Object.keys(OPERATOR_COMMANDS) as OperatorCommandName[];

function commandRoute(name: OperatorCommandName) {
  const row: OperatorCommandContract = OPERATOR_COMMANDS[name];
  const body: z.ZodType | undefined = COMMAND_RULES[name].body;
  const unchanged = row.unchanged && { 200: jsonContent(WorkflowViewSchema, row.unchanged.description) };
  return createRoute({
    method: "post",
    path: row.path,
    operationId: row.operationId,
    summary: row.summary,
    security: BEARER_AUTH,
    request: { params: row.path.includes("{stepId}") ? StepParamsSchema : WorkflowParamsSchema, ...(body ? jsonBody(body, row.bodyRequired === true) : {}) },
    responses: { ...unchanged, ...accepted, ...(body ? errorResponses(415) : {}) },
  });
}

/** The request for the object from a validated call: the step from the path, the body (none sent: `{}`). */
function commandRequest(name: OperatorCommandName, valid: { param: { id: string; stepId?: string }; json?: unknown }): CommandRequest {
  const { stepId } = valid.param;
  const body = COMMAND_RULES[name].body ? { body: valid.json ?? {} } : {};
  return { command: name, ...(stepId === undefined ? {} : { stepId }), ...body } as CommandRequest;
}

/**
 * Ask the object, map a refusal to its status, answer with the workflow: 202, or 200 when the command changed
 * nothing (pausing a paused workflow).
 */
async function runCommand(c: Context<AppEnv>, id: string, request: CommandRequest) {
  const outcome = await schedulerFor(c.env, c.get("tenant"), id).command(request);
  if (!outcome.ok) throw workflowRejectionToError(id, outcome);
  return c.json(await workflowOr404(c.env, c.get("tenant"), id), outcome.unchanged ? 200 : 202);
}

export const operatorCommandRoutes = new OpenAPIHono<AppEnv>();
for (const name of COMMAND_NAMES) {
  operatorCommandRoutes.openapi(commandRoute(name), async (c) => {
    const valid = { param: c.req.valid("param"), json: COMMAND_RULES[name].body ? c.req.valid("json" as never) : undefined };
    return runCommand(c, valid.param.id, commandRequest(name, valid));
  });
}
