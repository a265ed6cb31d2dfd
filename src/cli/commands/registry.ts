import type { DefinitionBody, DefinitionListQuery, DefinitionVersionsQuery, ScheduleListQuery, ScheduleSpec } from "../../client/index";
import { stringFlag, usageLine, type Command } from "../command";
import { asObject, readDocument } from "../documents";
import { UsageError } from "../failures";
import { positiveInteger } from "../flag-values";
import { PAGE_FLAGS, pageQuery } from "../page-flags";
import type { ScheduleView } from "../api-types";
import { definitionLines, definitionListLines, definitionVersionLines, publishedLines, scheduleLines, scheduleListLines, triggeredLines } from "../views/registry";

const definitions: Command = {
  name: "definitions",
  summary: "list the published definitions, each with its latest version (get, versions, put: below)",
  args: [],
  flags: PAGE_FLAGS,
  async run({ client, out, flags }) {
    out.result(await client.definitions.list(pageQuery(flags) as DefinitionListQuery), definitionListLines);
  },
};

const getDefinition: Command = {
  name: "definitions get",
  summary: "show a published definition: its latest version, or the one asked for",
  args: ["<name>"],
  flags: { version: { type: "string", value: "<n>", description: "this version instead of the latest" } },
  async run({ client, out, args: [name = ""], flags }) {
    const version = stringFlag(flags, "version");
    const published = await client.definitions.get(name, version === undefined ? undefined : positiveInteger("version", version, usageLine(getDefinition)));
    out.result(published, definitionLines);
  },
};

const definitionVersions: Command = {
  name: "definitions versions",
  summary: "list a definition's versions, newest first, with their hashes and when each was published",
  args: ["<name>"],
  flags: PAGE_FLAGS,
  async run({ client, out, args: [name = ""], flags }) {
    out.result(await client.definitions.versions(name, pageQuery(flags) as DefinitionVersionsQuery), definitionVersionLines);
  },
};

const putDefinition: Command = {
  name: "definitions put",
  summary: "publish a definition from a JSON or YAML file under its name: new content becomes the next version",
  args: ["<file>"],
  async run({ client, out, args: [file = ""] }) {
    const usage = usageLine(putDefinition);
    const definition = asObject(readDocument(file, usage), file, usage);
    if (typeof definition.name !== "string") throw new UsageError(`the definition in ${file} has no name`, usage);
    out.result(await client.definitions.publish(definition.name, definition as DefinitionBody), publishedLines);
  },
};

const schedules: Command = {
  name: "schedules",
  summary: "list the schedules with their next fire (get, create, pause, resume, trigger, delete: below)",
  args: [],
  flags: PAGE_FLAGS,
  async run({ client, out, flags }) {
    out.result(await client.schedules.list(pageQuery(flags) as ScheduleListQuery), (page) => scheduleListLines(page, Date.now()));
  },
};

const getSchedule: Command = {
  name: "schedules get",
  summary: "show a schedule: its next fire and its recent fires with the workflows they started",
  args: ["<id>"],
  async run({ client, out, args: [id = ""] }) {
    out.result(await client.schedules.get(id), (schedule) => scheduleLines(schedule, Date.now()));
  },
};

const createSchedule: Command = {
  name: "schedules create",
  summary: "create a schedule from a JSON or YAML file ({id, cron, timezone?, workflow, overlap?, ...})",
  args: ["<file>"],
  async run({ client, out, args: [file = ""] }) {
    const usage = usageLine(createSchedule);
    const spec = asObject(readDocument(file, usage), file, usage);
    out.result(await client.schedules.create(spec as ScheduleSpec), (schedule) => scheduleLines(schedule, Date.now()));
  },
};

/** pause, resume and trigger answer the schedule after the action. */
function scheduleAction(action: "pause" | "resume" | "trigger", summary: string): Command {
  return {
    name: `schedules ${action}`,
    summary,
    args: ["<id>"],
    async run({ client, out, args: [id = ""] }) {
      const describe = action === "trigger" ? triggeredLines : (schedule: ScheduleView) => [`${action} ${schedule.id}: ${schedule.paused ? "paused" : "active"}`];
      out.result(await client.schedules[action](id), describe);
    },
  };
}

const deleteSchedule: Command = {
  name: "schedules delete",
  summary: "delete a schedule (the workflows it started run on)",
  args: ["<id>"],
  async run({ client, out, args: [id = ""] }) {
    out.result(await client.schedules.delete(id), () => [`deleted schedule ${id}`]);
  },
};

export const REGISTRY_COMMANDS: Command[] = [
  definitions,
  getDefinition,
  definitionVersions,
  putDefinition,
  schedules,
  getSchedule,
  createSchedule,
  scheduleAction("pause", "pause a schedule: no fires until resumed"),
  scheduleAction("resume", "resume a schedule: the next fire counts from now"),
  scheduleAction("trigger", "fire a schedule now, under its overlap policy"),
  deleteSchedule,
];
