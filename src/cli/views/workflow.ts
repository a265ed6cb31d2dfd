import type { StepView, WorkflowList, WorkflowView } from "../api-types";
import { compactJson, duration, fields, relative, table, time } from "../format";
import { childOf, childWords, parentOf, parentWords } from "./links";

/** `shepherd get`: the workflow's fields, then one row per step. */
export function workflowLines(workflow: WorkflowView, now: number): string[] {
  const version = workflow.definition?.version === undefined ? "" : ` v${workflow.definition.version}`;
  const took = workflow.endedAt === undefined ? undefined : `${time(workflow.endedAt)} (after ${duration(workflow.endedAt - workflow.createdAt)})`;
  return [
    ...fields([
      ["workflow", workflow.id],
      ["definition", `${workflow.name}${version}`],
      ["parent", mapDefined(parentOf(workflow), parentWords)],
      ["status", workflow.status],
      ["created", time(workflow.createdAt)],
      ["starts", workflow.status === "scheduled" && workflow.startAt !== undefined ? `${time(workflow.startAt)} (${relative(workflow.startAt, now)})` : undefined],
      ["scheduled for", workflow.status !== "scheduled" && workflow.startAt !== undefined ? time(workflow.startAt) : undefined],
      ["ended", took],
      ["paused since", workflow.pausedAt === undefined ? undefined : time(workflow.pausedAt)],
      ["operator by", workflow.attentionDeadline === undefined ? undefined : `${time(workflow.attentionDeadline)}, then the default action`],
      ["redriven", workflow.redriveCount > 0 ? `${workflow.redriveCount} time(s)` : undefined],
      ["input", workflow.input === undefined ? undefined : compactJson(workflow.input, 100)],
      ["output", workflow.output === undefined ? undefined : compactJson(workflow.output, 100)],
      ["error", workflow.error?.message],
      ["inbox", workflow.pendingEvents.length > 0 ? workflow.pendingEvents.map((event) => event.event).join(", ") : undefined],
    ]),
    "",
    ...stepTable(workflow.steps, now),
  ];
}

export function stepTable(steps: StepView[], now: number): string[] {
  return table(
    ["STEP", "KIND", "STATUS", "ATTEMPT", "DETAIL"],
    steps.map((step) => [step.id, step.kind, step.status, step.attempt === 0 ? "-" : String(step.attempt), stepDetail(step, now)]),
  );
}

/**
 * The one thing worth knowing about a step now: a map's items by status, a child workflow and where it stands,
 * what it waits for, why it failed, or what it returned.
 */
export function stepDetail(step: StepView, now: number): string {
  if (step.items) return itemsDetail(step.items, step.status === "failed" ? step.error?.message : undefined);
  const child = childOf(step);
  if (child) return childWords(child);
  if (step.waitingFor) return `for event "${step.waitingFor.event}" (gives up ${relative(step.waitingFor.timeoutAt, now)})`;
  if (step.sleepingUntil !== undefined) return `until ${time(step.sleepingUntil)} (${relative(step.sleepingUntil, now)})`;
  if (step.nextRetryAt !== undefined && step.status === "retrying") return `next attempt ${relative(step.nextRetryAt, now)}${step.error ? `: ${step.error.message}` : ""}`;
  if (step.error && ["failed", "retrying"].includes(step.status)) return step.error.message;
  if (step.progress !== undefined && ["running", "waiting"].includes(step.status)) return `progress ${compactJson(step.progress, 60)}`;
  if (step.output !== undefined) return compactJson(step.output, 60);
  return "";
}

type ItemCounts = NonNullable<StepView["items"]>;

/** "412/1000 succeeded, 3 failed, 50 running": never the items themselves (`GET …/items` pages through them). */
export function itemsDetail(items: ItemCounts, error?: string): string {
  const others = (["failed", "skipped", "running"] as const).filter((status) => items[status] > 0).map((status) => `, ${items[status]} ${status}`);
  return `${items.succeeded}/${items.total} succeeded${others.join("")}${error ? `: ${error}` : ""}`;
}

function mapDefined<T>(value: T | undefined, words: (value: T) => string): string | undefined {
  return value === undefined ? undefined : words(value);
}

/** `shepherd list`: one row per workflow, newest first, with why an open one is worth a look, and how to get the next page. */
export function workflowListLines(page: WorkflowList, now: number = Date.now()): string[] {
  if (page.workflows.length === 0) return ["no workflows"];
  const rows = page.workflows.map((workflow) => [workflow.id, workflow.name, statusWords(workflow), time(workflow.createdAt), time(workflow.endedAt), whyWords(workflow, now)]);
  return [...table(["ID", "NAME", "STATUS", "CREATED", "ENDED", "WHY"], rows), ...(page.nextCursor ? [`more: --cursor ${page.nextCursor}`] : [])];
}

/** `retrying notify 2/8 after 503 · next in 9m 58s`: the service's line, and when the supervisor next acts on it. */
function whyWords(workflow: WorkflowList["workflows"][number], now: number): string {
  if (workflow.summary === undefined) return "";
  return workflow.nextDeadlineAt === undefined ? workflow.summary : `${workflow.summary} · next ${relative(workflow.nextDeadlineAt, now)}`;
}

/** A scheduled workflow's status says when it starts. */
function statusWords(workflow: WorkflowList["workflows"][number]): string {
  return workflow.status === "scheduled" && workflow.startAt !== undefined ? `scheduled, starts ${time(workflow.startAt)}` : workflow.status;
}

/** What an operator action answers: the workflow after it. */
export function actedLines(action: string, workflow: WorkflowView): string[] {
  return [`${action} ${workflow.id}: ${workflow.status}`];
}
