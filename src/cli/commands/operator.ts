import type { SendEventRequest } from "../../client/index";
import { OPERATOR_COMMANDS as COMMAND_TABLE, type CommandField, type OperatorCommandContract, type OperatorCommandName } from "../../domain/contract";
import type { WorkflowView } from "../api-types";
import { stringFlag, usageLine, type Command, type FlagValues } from "../command";
import { readDocument, readJsonFlag } from "../documents";
import { UsageError } from "../failures";
import { actedLines } from "../views/workflow";

/** `retryStep` → `retry-step`: how commands and flags are spelt on the command line. */
const kebab = (name: string): string => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

/** One operator command of the table: the workflow's id (and the step's), a flag per field of its body. */
function tableCommand(name: OperatorCommandName): Command {
  const row: OperatorCommandContract = COMMAND_TABLE[name];
  const onStep = row.path.includes("{stepId}");
  const fields = Object.entries(row.fields ?? {});
  const command: Command = {
    name: kebab(name),
    summary: row.summary.charAt(0).toLowerCase() + row.summary.slice(1),
    args: onStep ? ["<id>", "<step>"] : ["<id>"],
    flags: Object.fromEntries(fields.map(([field, spec]) => [kebab(field), { type: "string", value: spec.value, description: spec.description }])),
    async run({ client, out, args: [id = "", stepId = ""], flags }) {
      const send = client[name] as (id: string, ...rest: unknown[]) => Promise<WorkflowView>;
      const body = row.fields ? [bodyOf(fields, flags, usageLine(command))] : [];
      out.result(await send(id, ...(onStep ? [stepId] : []), ...body), (workflow) => actedLines(command.name, workflow));
    },
  };
  return command;
}

/** The body from the flags given: a JSON field's flag is parsed, a text field's sent as it is. */
function bodyOf(fields: [string, CommandField][], flags: FlagValues, usage: string): Record<string, unknown> {
  return Object.fromEntries(
    fields.flatMap(([field, spec]) => {
      const text = stringFlag(flags, kebab(field));
      if (text === undefined) return [];
      return [[field, spec.json ? readJsonFlag(kebab(field), text, usage) : text]];
    }),
  );
}

const event: Command = {
  name: "event",
  summary: "send an event to a workflow: a step waiting for it takes it, else its inbox keeps it",
  args: ["<id>", "<event>"],
  flags: {
    payload: { type: "string", value: "<json>", description: "the event's payload, as JSON (the waiting step's output)" },
    "payload-file": { type: "string", value: "<file>", description: "the payload, from a JSON or YAML file" },
    "event-id": { type: "string", value: "<key>", description: "a dedupe key: the same key again is delivered once" },
    reason: { type: "string", value: "<text>", description: "why, recorded in the history with who sent it" },
  },
  async run({ client, out, args: [id = "", name = ""], flags }) {
    const eventId = stringFlag(flags, "event-id");
    const reason = stringFlag(flags, "reason");
    const request: SendEventRequest = {
      event: name,
      ...payloadOf(flags.payload, flags["payload-file"]),
      ...(eventId === undefined ? {} : { id: eventId }),
      ...(reason === undefined ? {} : { reason }),
    };
    const answer = await client.sendEvent(id, request);
    out.result(answer, ({ consumed }) => [consumed ? `${name} sent to ${id}: a waiting step took it` : `${name} sent to ${id}: kept in its inbox for a later wait`]);
  },
};

function payloadOf(inline: unknown, file: unknown): { payload?: unknown } {
  const usage = usageLine(event);
  if (typeof inline === "string" && typeof file === "string") throw new UsageError("give --payload or --payload-file, not both", usage);
  if (typeof inline === "string") return { payload: readJsonFlag("payload", inline, usage) };
  if (typeof file === "string") return { payload: readDocument(file, usage) };
  return {};
}

/** The table's commands, then `event` (events are not operator commands: see domain/contract.ts). */
export const OPERATOR_COMMANDS: Command[] = [...(Object.keys(COMMAND_TABLE) as OperatorCommandName[]).map(tableCommand), event];
