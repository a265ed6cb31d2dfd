// The client's operator commands, one method per row of the commands' table (src/domain/contract.ts), as the
// routes are: `client.pause(id)`, `client.skipStep(id, stepId, { output })`, `client.terminate(id, { reason })`.
import { OPERATOR_COMMANDS, type OperatorCommandContract, type OperatorCommandName } from "../domain/contract";
import type { CommandBody } from "../domain/language/operator-commands";
import { ShepherdApiError } from "./errors";
import type { FetchLike } from "./retrying-fetch";

type Row<K extends OperatorCommandName> = (typeof OPERATOR_COMMANDS)[K];
type StepArg<K extends OperatorCommandName> = Row<K>["path"] extends `${string}{stepId}${string}` ? [stepId: string] : [];
type BodyArg<K extends OperatorCommandName> = Row<K> extends { bodyRequired: true }
  ? [body: CommandBody<K>]
  : Row<K> extends { fields: object }
    ? [body?: CommandBody<K>]
    : [];

/** Every command as a method that answers the workflow after it (`View`, the API's workflow view). */
export type CommandMethods<View> = { [K in OperatorCommandName]: (id: string, ...args: [...StepArg<K>, ...BodyArg<K>]) => Promise<View> };

/** Where and how the client sends a request it builds itself, outside `hc`. */
export interface Connection {
  url: string;
  fetch: FetchLike;
  headers: Record<string, string>;
}

export function commandOperations<View>(connection: Connection): CommandMethods<View> {
  const names = Object.keys(OPERATOR_COMMANDS) as OperatorCommandName[];
  return Object.fromEntries(names.map((name) => [name, (id: string, ...args: unknown[]) => send(connection, OPERATOR_COMMANDS[name], id, args)])) as CommandMethods<View>;
}

/** POSTs one command: the step (for a step command) and then the body are the arguments after the id. */
async function send(connection: Connection, row: OperatorCommandContract, id: string, args: unknown[]): Promise<unknown> {
  const onStep = row.path.includes("{stepId}");
  const path = row.path.replace("{id}", id).replace("{stepId}", onStep ? String(args[0]) : "");
  const body = onStep ? args[1] : args[0];
  // As hono's client sends a route's JSON: a body only for a command that takes one, `{}` when none was given.
  const init: RequestInit = row.fields
    ? { method: "POST", headers: { ...connection.headers, "Content-Type": "application/json" }, body: JSON.stringify(body ?? {}) }
    : { method: "POST", headers: connection.headers };
  const response = await connection.fetch(`${connection.url.replace(/\/+$/, "")}${path}`, init);
  if (!response.ok) throw await ShepherdApiError.from(response);
  return response.json();
}
