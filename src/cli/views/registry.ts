import { stringify } from "yaml";
import type { DefinitionList, DefinitionVersion, DefinitionVersionList, PublishedDefinition, ScheduleList, ScheduleView } from "../api-types";
import { fields, relative, table, time } from "../format";

export function definitionListLines(page: DefinitionList): string[] {
  if (page.definitions.length === 0) return ["no definitions"];
  const rows = page.definitions.map((definition) => [definition.name, String(definition.version), definition.hash.slice(0, 12), time(definition.createdAt)]);
  return [...table(["NAME", "LATEST", "HASH", "PUBLISHED"], rows), ...(page.nextCursor ? [`more: --cursor ${page.nextCursor}`] : [])];
}

export function definitionVersionLines(page: DefinitionVersionList): string[] {
  const rows = page.versions.map((version) => [String(version.version), version.hash.slice(0, 12), time(version.createdAt)]);
  return [...table(["VERSION", "HASH", "PUBLISHED"], rows), ...(page.nextCursor ? [`more: --cursor ${page.nextCursor}`] : [])];
}

/** One version with its content, as YAML: the form people write definitions in. */
export function definitionLines(published: PublishedDefinition): string[] {
  return [
    ...fields([
      ["definition", published.name],
      ["version", String(published.version)],
      ["hash", published.hash],
      ["published", time(published.createdAt)],
    ]),
    "",
    stringify(published.definition).trimEnd(),
  ];
}

export function publishedLines(version: DefinitionVersion): string[] {
  return [`${version.name} v${version.version} (hash ${version.hash.slice(0, 12)}, published ${time(version.createdAt)})`];
}

export function scheduleListLines(page: ScheduleList, now: number): string[] {
  if (page.schedules.length === 0) return ["no schedules"];
  const rows = page.schedules.map((schedule) => [schedule.id, schedule.cron, schedule.timezone, schedule.overlap, schedule.paused ? "paused" : "active", nextFire(schedule, now)]);
  return [...table(["ID", "CRON", "TIMEZONE", "OVERLAP", "STATE", "NEXT FIRE"], rows), ...(page.nextCursor ? [`more: --cursor ${page.nextCursor}`] : [])];
}

export function scheduleLines(schedule: ScheduleView, now: number): string[] {
  const workflow = schedule.workflow;
  const starts = workflow.definitionRef ? `${workflow.definitionRef.name} (published)` : (workflow.definition?.name ?? "?");
  const lines = fields([
    ["schedule", schedule.id],
    ["cron", `${schedule.cron} (${schedule.timezone})`],
    ["state", schedule.paused ? "paused" : "active"],
    ["next fire", nextFire(schedule, now)],
    ["overlap", schedule.overlap],
    ["starts", starts],
  ]);
  if (schedule.recent.length === 0) return [...lines, "", "no fires yet"];
  const rows = schedule.recent.map((fire) => [time(fire.at), fire.outcome, fire.workflowId ?? fire.error ?? ""]);
  return [...lines, "", ...table(["FIRE", "OUTCOME", "WORKFLOW"], rows)];
}

function nextFire(schedule: ScheduleView, now: number): string {
  return schedule.nextFireAt === null ? "-" : `${time(schedule.nextFireAt)} (${relative(schedule.nextFireAt, now)})`;
}

/** What a trigger did: the newest fire, with the workflow it started. */
export function triggeredLines(schedule: ScheduleView): string[] {
  const fire = schedule.recent.at(-1);
  if (fire === undefined) return [`trigger ${schedule.id}: no fire recorded`];
  return [`trigger ${schedule.id}: ${fire.outcome}${fire.workflowId ? ` ${fire.workflowId}` : ""}${fire.error ? ` (${fire.error})` : ""}`];
}
