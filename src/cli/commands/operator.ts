import type { SendEventRequest } from "../../client/index";
import { stringFlag, usageLine, type Command } from "../command";
import { readDocument, readJsonFlag } from "../documents";
import { UsageError } from "../failures";
import { actedLines } from "../views/workflow";

/** An action that takes only the workflow's id and answers the workflow after it. */
function simpleAction(name: "cancel" | "pause" | "resume", summary: string): Command {
  return {
    name,
    summary,
    args: ["<id>"],
    async run({ client, out, args: [id = ""] }) {
      out.result(await client[name](id), (workflow) => actedLines(name, workflow));
    },
  };
}

const cancel = simpleAction("cancel", "cancel a workflow: fence running attempts, compensate what succeeded, end cancelled");
const pause = simpleAction("pause", "pause a workflow: dispatch nothing and hold its timers until resumed");
const resume = simpleAction("resume", "resume a paused workflow: what fell due meanwhile happens now");

const terminate: Command = {
  name: "terminate",
  summary: "end a workflow terminated at once: fence running attempts, compensate nothing",
  args: ["<id>"],
  flags: { reason: { type: "string", value: "<text>", description: "why, kept in the history" } },
  async run({ client, out, args: [id = ""], flags }) {
    const reason = stringFlag(flags, "reason");
    out.result(await client.terminate(id, reason === undefined ? {} : { reason }), (workflow) => actedLines("terminate", workflow));
  },
};

const redrive: Command = {
  name: "redrive",
  summary: "run a failed, cancelled or terminated workflow again from the steps that did not succeed",
  args: ["<id>"],
  flags: { "from-step": { type: "string", value: "<step>", description: "also run this step and everything downstream of it again" } },
  async run({ client, out, args: [id = ""], flags }) {
    const fromStep = stringFlag(flags, "from-step");
    out.result(await client.redrive(id, fromStep === undefined ? {} : { fromStep }), (workflow) => actedLines("redrive", workflow));
  },
};

const event: Command = {
  name: "event",
  summary: "send an event to a workflow: a step waiting for it takes it, else its inbox keeps it",
  args: ["<id>", "<event>"],
  flags: {
    payload: { type: "string", value: "<json>", description: "the event's payload, as JSON (the waiting step's output)" },
    "payload-file": { type: "string", value: "<file>", description: "the payload, from a JSON or YAML file" },
    "event-id": { type: "string", value: "<key>", description: "a dedupe key: the same key again is delivered once" },
  },
  async run({ client, out, args: [id = "", name = ""], flags }) {
    const request: SendEventRequest = { event: name, ...payloadOf(flags.payload, flags["payload-file"]) };
    const eventId = stringFlag(flags, "event-id");
    const answer = await client.sendEvent(id, eventId === undefined ? request : { ...request, id: eventId });
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

export const OPERATOR_COMMANDS: Command[] = [cancel, terminate, pause, resume, redrive, event];
