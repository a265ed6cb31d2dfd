import type { BulkRequest } from "../../client/index";
import { LIST_PAGE_MAX, type BulkAction } from "../../domain/contract";
import type { BulkJobView } from "../api-types";
import { stringFlag, usageLine, type Command, type CommandContext, type FlagSpec, type FlagValues } from "../command";
import { readDocument, readJsonFlag } from "../documents";
import { UsageError } from "../failures";
import { definedOnly, timeFlag } from "../flag-values";
import { bulkJobLines, bulkListLines, bulkProgressLine, bulkStartedLines } from "../views/bulk";

/** The service pushes nothing: --wait asks once a second, as watch does. */
const POLL_INTERVAL_MS = 1_000;

/** The filter's flags: every one given must hold; at least one is needed (the service refuses an empty filter). */
const FILTER_FLAGS: Record<string, FlagSpec> = {
  status: { type: "string", value: "<status>", description: "only workflows with this status (running, paused, failed, ...)" },
  name: { type: "string", value: "<name>", description: "only workflows of this definition" },
  "created-after": { type: "string", value: "<time>", description: "only workflows created at or after this time (epoch ms or ISO 8601)" },
  "created-before": { type: "string", value: "<time>", description: "only workflows created before this time (epoch ms or ISO 8601)" },
  parent: { type: "string", value: "<id>", description: "only the child workflows of this workflow" },
  ids: { type: "string", value: "<id,id,...>", description: "only these workflows (at most 1000, comma-separated)" },
  "id-prefix": { type: "string", value: "<text>", description: "only workflows whose id starts with this" },
};

const ACTION_FLAGS: Record<string, FlagSpec> = {
  ...FILTER_FLAGS,
  reason: { type: "string", value: "<text>", description: "why: kept with the job, and in each workflow's history with your token's name" },
  id: { type: "string", value: "<id>", description: "your name for the job: the same command again answers the same job (safe to retry)" },
  wait: { type: "boolean", description: "then follow the job until it is done, a line per change" },
};

const EVENT_FLAGS: Record<string, FlagSpec> = {
  payload: { type: "string", value: "<json>", description: "the event's payload, as JSON (the waiting step's output)" },
  "payload-file": { type: "string", value: "<file>", description: "the payload, from a JSON or YAML file" },
  "event-id": { type: "string", value: "<key>", description: "a dedupe key (default: one of the job's, so a workflow gets the event once)" },
};

const NOTES = [
  "The job runs in the service, a slice at a time: the command answers at once with its id (follow it with shepherd bulk status <id>, or --wait).",
  "A workflow that refuses the action (a cancel of one that has ended) counts as failed; the job lists the first 100 with why.",
];

function filterOf(flags: FlagValues, usage: string): BulkRequest["filter"] {
  const text = (name: string) => stringFlag(flags, name);
  const after = text("created-after");
  const before = text("created-before");
  const ids = text("ids");
  const filter = {
    ...definedOnly({ status: text("status"), name: text("name"), parentId: text("parent"), idPrefix: text("id-prefix") }),
    ...(after === undefined ? {} : { createdAfter: timeFlag("created-after", after, usage) }),
    ...(before === undefined ? {} : { createdBefore: timeFlag("created-before", before, usage) }),
    ...(ids === undefined ? {} : { ids: ids.split(",").map((id) => id.trim()).filter(Boolean) }),
  };
  if (Object.keys(filter).length === 0) {
    throw new UsageError(`give at least one of ${Object.keys(FILTER_FLAGS).map((flag) => `--${flag}`).join(", ")} (an empty filter is never every workflow)`, usage);
  }
  // Values go out as given; the service checks them (400 naming the field).
  return filter as BulkRequest["filter"];
}

function eventOf(name: string, flags: FlagValues, usage: string): NonNullable<BulkRequest["event"]> {
  const inline = stringFlag(flags, "payload");
  const file = stringFlag(flags, "payload-file");
  if (inline !== undefined && file !== undefined) throw new UsageError("give --payload or --payload-file, not both", usage);
  const payload = inline !== undefined ? { payload: readJsonFlag("payload", inline, usage) } : file !== undefined ? { payload: readDocument(file, usage) } : {};
  const id = stringFlag(flags, "event-id");
  return { event: name, ...payload, ...(id === undefined ? {} : { id }) };
}

/** The job's own fields from the flags: its id and why. */
const jobFlags = (flags: FlagValues): Pick<BulkRequest, "id" | "reason"> => definedOnly({ id: stringFlag(flags, "id"), reason: stringFlag(flags, "reason") });

/** Starts the job; with --wait, follows it until it is done. */
async function startJob(context: CommandContext, request: BulkRequest): Promise<void> {
  const job = await context.client.bulk.start(request);
  if (context.flags.wait !== true) return context.out.result(job, bulkStartedLines);
  if (!context.out.json) context.out.stdout.write(`${bulkStartedLines(job)[0]}\n`);
  context.out.result(await followJob(context, job), bulkJobLines);
}

async function followJob(context: CommandContext, first: BulkJobView): Promise<BulkJobView> {
  let shown = "";
  for (let job = first; ; job = await context.client.bulk.get(job.id)) {
    const line = bulkProgressLine(job);
    if (!context.out.json && line !== shown) context.out.stdout.write(`${line}\n`);
    shown = line;
    if (job.status === "done") return job;
    await context.sleep(POLL_INTERVAL_MS);
  }
}

/** What each `bulk <action>` does to every workflow the filter matches. */
const ACTION_SUMMARIES: Record<Exclude<BulkAction, "event">, string> = {
  cancel: "cancel every workflow the filter matches (each compensated, then cancelled)",
  terminate: "terminate every workflow the filter matches (ended at once, nothing compensated)",
  redrive: "redrive every failed, cancelled or terminated workflow the filter matches",
  pause: "pause every workflow the filter matches",
  resume: "resume every paused workflow the filter matches",
};

/** `bulk cancel`, `bulk pause` ...: the operator command on every workflow the filter matches. */
function actionCommand(action: Exclude<BulkAction, "event">): Command {
  const command: Command = {
    name: `bulk ${action}`,
    summary: `${ACTION_SUMMARIES[action]}, as a paced job`,
    args: [],
    flags: ACTION_FLAGS,
    notes: NOTES,
    async run(context) {
      const usage = usageLine(command);
      await startJob(context, { action, filter: filterOf(context.flags, usage), ...jobFlags(context.flags) });
    },
  };
  return command;
}

const bulkEvent: Command = {
  name: "bulk event",
  summary: "send an event to every workflow the filter matches, as a paced job",
  args: ["<event>"],
  flags: { ...ACTION_FLAGS, ...EVENT_FLAGS },
  notes: NOTES,
  async run(context) {
    const usage = usageLine(bulkEvent);
    const event = eventOf(context.args[0] ?? "", context.flags, usage);
    await startJob(context, { action: "event", filter: filterOf(context.flags, usage), event, ...jobFlags(context.flags) });
  },
};

const bulkStatus: Command = {
  name: "bulk status",
  summary: "show a bulk job: its status, its counts (matched = done + failed once done) and its first refusals",
  args: ["<id>"],
  flags: { wait: { type: "boolean", description: "follow the job until it is done, a line per change" } },
  async run(context) {
    const job = await context.client.bulk.get(context.args[0] ?? "");
    context.out.result(context.flags.wait === true ? await followJob(context, job) : job, bulkJobLines);
  },
};

const bulkList: Command = {
  name: "bulk list",
  summary: "list the bulk jobs, newest first",
  args: [],
  flags: {
    limit: { type: "string", value: "<n>", description: `jobs per page (default 20, at most ${LIST_PAGE_MAX})` },
    cursor: { type: "string", value: "<cursor>", description: "the next page, as the previous one said" },
  },
  async run({ client, out, flags }) {
    const query = definedOnly({ limit: stringFlag(flags, "limit"), cursor: stringFlag(flags, "cursor") });
    out.result(await client.bulk.list(query as Parameters<typeof client.bulk.list>[0]), bulkListLines);
  },
};

const ACTIONS = Object.keys(ACTION_SUMMARIES) as Exclude<BulkAction, "event">[];

export const BULK_COMMANDS: Command[] = [...ACTIONS.map(actionCommand), bulkEvent, bulkStatus, bulkList];
