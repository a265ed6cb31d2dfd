import type { HistoryQuery, ListQuery, MapItemsQuery, StartRequest } from "../../client/index";
import { LIST_PAGE_DEFAULT, LIST_PAGE_MAX, MAP_ITEM_STATUSES, WORKFLOW_STATUSES } from "../../domain/contract";
import type { WorkflowView } from "../api-types";
import { relative, time } from "../format";
import { stringFlag, usageLine, type Command, type FlagValues } from "../command";
import { asObject, readDocument, readJsonFlag } from "../documents";
import { UsageError } from "../failures";
import { definedOnly, durationMs, positiveInteger, timeFlag } from "../flag-values";
import { diagnosisLines, historyLines } from "../views/history";
import { mapItemLines } from "../views/service";
import { attemptLines } from "../views/attempt";
import { workflowLines, workflowListLines } from "../views/workflow";
import { startBatch } from "./start-batch";
import { watchWorkflow } from "./watch";

const start: Command = {
  name: "start",
  summary: "start a workflow from a JSON or YAML file, or a published definition by name",
  args: ["<file>?"],
  flags: {
    definition: { type: "string", value: "<name>", description: "start the latest published version of this definition (no file)" },
    version: { type: "string", value: "<n>", description: "with --definition: this version instead of the latest" },
    id: { type: "string", value: "<id>", description: "the workflow's id (default: the file's, else the service makes one)" },
    input: { type: "string", value: "<json>", description: "the workflow's input, as JSON" },
    "input-file": { type: "string", value: "<file>", description: "the workflow's input, from a JSON or YAML file" },
    "start-at": { type: "string", value: "<time>", description: "start at this time (ISO 8601, e.g. 2027-01-31T09:00:00Z, or epoch ms): scheduled until then" },
    delay: { type: "string", value: "<duration>", description: "start after this long (90s, 10m, 2h, 1d, or ms): scheduled until then" },
    watch: { type: "boolean", description: "then watch it until it ends (exit status as for watch)" },
  },
  notes: [
    "The file (\"-\" for stdin) holds a definition ({name, steps, ...}) or a whole start request ({id?, definition | definitionRef, input?}).",
    "Starting the same id with the same body again answers the workflow already there.",
    "A start may be at most 365 days ahead; a scheduled workflow can be cancelled or terminated before it starts.",
  ],
  async run(context) {
    const request = startRequest(context.args[0], context.flags, usageLine(start));
    // The service validates the request and answers 400 with the paths of what is wrong.
    const workflow = await context.client.start(request as StartRequest);
    if (context.flags.watch === true) return watchWorkflow(context, workflow.id);
    context.out.result(workflow, () => [startedWords(workflow)]);
  },
};

function startRequest(file: string | undefined, flags: FlagValues, usage: string): Record<string, unknown> {
  const name = stringFlag(flags, "definition");
  const version = stringFlag(flags, "version");
  if (file !== undefined && name !== undefined) throw new UsageError("give a file or --definition, not both", usage);
  if (file === undefined && name === undefined) throw new UsageError("missing <file> (or --definition <name>)", usage);
  if (version !== undefined && name === undefined) throw new UsageError("--version goes with --definition", usage);
  const request = file === undefined ? { definitionRef: { name, ...(version === undefined ? {} : { version: positiveInteger("version", version, usage) }) } } : fromFile(file, usage);
  const id = stringFlag(flags, "id");
  const input = inputOf(flags, usage);
  return { ...request, ...(id === undefined ? {} : { id }), ...(input === undefined ? {} : { input: input.value }), ...startTimeOf(flags, usage) };
}

/** `--start-at` or `--delay` (not both) as the body's `startAt` or `startDelayMs`. */
function startTimeOf(flags: FlagValues, usage: string): { startAt?: number; startDelayMs?: number } {
  const at = stringFlag(flags, "start-at");
  const delay = stringFlag(flags, "delay");
  if (at !== undefined && delay !== undefined) throw new UsageError("give --start-at or --delay, not both", usage);
  if (at !== undefined) return { startAt: timeFlag("start-at", at, usage) };
  return delay === undefined ? {} : { startDelayMs: durationMs("delay", delay, usage) };
}

function startedWords(workflow: WorkflowView): string {
  if (workflow.status === "scheduled" && workflow.startAt !== undefined) return `scheduled ${workflow.id} (${workflow.name}): starts ${time(workflow.startAt)} (${relative(workflow.startAt, Date.now())})`;
  return `started ${workflow.id} (${workflow.name}): ${workflow.status}`;
}

/** A file with `steps` is a definition; anything else is taken as a start request. */
function fromFile(file: string, usage: string): Record<string, unknown> {
  const document = asObject(readDocument(file, usage), file, usage);
  return "steps" in document ? { definition: document } : document;
}

function inputOf(flags: FlagValues, usage: string): { value: unknown } | undefined {
  const inline = stringFlag(flags, "input");
  const file = stringFlag(flags, "input-file");
  if (inline !== undefined && file !== undefined) throw new UsageError("give --input or --input-file, not both", usage);
  if (inline !== undefined) return { value: readJsonFlag("input", inline, usage) };
  if (file !== undefined) return { value: readDocument(file, usage) };
  return undefined;
}

const get: Command = {
  name: "get",
  summary: "show a workflow: its status, input, output and steps",
  args: ["<id>"],
  async run({ client, out, args: [id = ""] }) {
    const workflow = await client.get(id);
    out.result(workflow, (view) => workflowLines(view, Date.now()));
  },
};

const list: Command = {
  name: "list",
  summary: "list workflows, newest first",
  args: [],
  flags: {
    status: { type: "string", value: "<status>", description: `only workflows with this status: ${WORKFLOW_STATUSES.join(", ")}` },
    name: { type: "string", value: "<name>", description: "only workflows of this definition" },
    "id-prefix": { type: "string", value: "<text>", description: "only workflows whose id starts with this" },
    "created-after": { type: "string", value: "<time>", description: "only workflows created at or after this time (ISO 8601, e.g. 2026-05-01T12:00:00Z, or epoch ms)" },
    "created-before": { type: "string", value: "<time>", description: "only workflows created before this time (ISO 8601 or epoch ms)" },
    limit: { type: "string", value: "<n>", description: `workflows per page (default ${LIST_PAGE_DEFAULT}, at most ${LIST_PAGE_MAX})` },
    cursor: { type: "string", value: "<cursor>", description: "the next page, as the previous one said" },
  },
  notes: ["WHY says why an open workflow is worth a look (a retry, a wait for an event, a failure waiting on an operator …) and when the supervisor next acts on it."],
  async run({ client, out, flags }) {
    const text = (name: string) => stringFlag(flags, name);
    const query = definedOnly({
      status: text("status"),
      name: text("name"),
      idPrefix: text("id-prefix"),
      createdAfter: text("created-after"),
      createdBefore: text("created-before"),
      limit: text("limit"),
      cursor: text("cursor"),
    });
    // Query values go out as text whatever their type; the service checks them (400 naming the field).
    out.result(await client.list(query as ListQuery), (page) => workflowListLines(page, Date.now()));
  },
};

const history: Command = {
  name: "history",
  summary: "show a workflow's history: every event, in order",
  args: ["<id>"],
  flags: {
    after: { type: "string", value: "<seq>", description: "only events after this one (the previous page's last)" },
    limit: { type: "string", value: "<n>", description: "events per page (default and most 1000)" },
  },
  async run({ client, out, args: [id = ""], flags }) {
    const query = definedOnly({ after: stringFlag(flags, "after"), limit: stringFlag(flags, "limit") });
    out.result(await client.history(id, query as HistoryQuery), historyLines);
  },
};

const diagnose: Command = {
  name: "diagnose",
  summary: "why a workflow is where it is: what it waits for, its next deadline, the supervisor's decisions",
  args: ["<id>"],
  async run({ client, out, args: [id = ""] }) {
    out.result(await client.diagnosis(id), (diagnosis) => diagnosisLines(diagnosis, Date.now()));
  },
};

const items: Command = {
  name: "items",
  summary: "show a map step's items in order: each one's status, attempt, and output or error",
  args: ["<id>", "<step>"],
  flags: {
    status: { type: "string", value: "<status>", description: `only items with this status: ${MAP_ITEM_STATUSES.join(", ")}` },
    limit: { type: "string", value: "<n>", description: "items per page (default 100, at most 1000)" },
    cursor: { type: "string", value: "<cursor>", description: "the next page, as the previous one said" },
  },
  async run({ client, out, args: [id = "", stepId = ""], flags }) {
    const query = definedOnly({ status: stringFlag(flags, "status"), limit: stringFlag(flags, "limit"), cursor: stringFlag(flags, "cursor") });
    out.result(await client.mapItems(id, stepId, query as MapItemsQuery), mapItemLines);
  },
};

const attempt: Command = {
  name: "attempt",
  summary: "show what one attempt of a step sent and what came back (credentials redacted, bodies cut at 4 KiB)",
  args: ["<id>", "<step>", "<n>"],
  async run({ client, out, args: [id = "", stepId = "", n = ""] }) {
    if (!/^[1-9]\d{0,8}$/.test(n)) throw new UsageError(`<n> must be an attempt number (1, 2, 3 …), got "${n}"`, usageLine(attempt));
    out.result(await client.attempt(id, stepId, Number(n)), attemptLines);
  },
};

export const WORKFLOW_COMMANDS: Command[] = [start, startBatch, get, list, history, diagnose, items, attempt];
