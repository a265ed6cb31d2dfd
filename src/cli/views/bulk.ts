import type { BulkJobList, BulkJobView } from "../api-types";
import { fields, table, time } from "../format";

/** `name=orders status=running`: the filter as the command line gave it. */
export function filterText(filter: BulkJobView["filter"]): string {
  const parts = Object.entries(filter).map(([key, value]) => {
    if (key === "createdAfter" || key === "createdBefore") return `${key}=${time(value as number)}`;
    if (key === "ids") return `ids=${(value as string[]).length > 3 ? `${(value as string[]).slice(0, 3).join(",")},… (${(value as string[]).length})` : (value as string[]).join(",")}`;
    return `${key}=${String(value)}`;
  });
  return parts.join(" ");
}

export function bulkStartedLines(job: BulkJobView): string[] {
  return [`bulk job ${job.id}: ${job.action} of the workflows matching ${filterText(job.filter)}`, `follow it: shepherd bulk status ${job.id}`];
}

/** One line of progress: what --wait prints at each change. */
export function bulkProgressLine(job: BulkJobView): string {
  return `${job.status}: ${job.matched} matched, ${job.done} done, ${job.failed} failed`;
}

export function bulkJobLines(job: BulkJobView): string[] {
  const lines = fields([
    ["bulk job", job.id],
    ["action", job.event ? `${job.action} ${job.event.event}` : job.action],
    ["filter", filterText(job.filter)],
    ["reason", job.reason],
    ["by", job.actor],
    ["status", job.status],
    ["matched", String(job.matched)],
    ["done", String(job.done)],
    ["failed", String(job.failed)],
    ["created", time(job.createdAt)],
    ["ended", job.endedAt === undefined ? undefined : time(job.endedAt)],
  ]);
  if (job.errors.length === 0) return lines;
  const more = job.failed > job.errors.length ? [`(the first ${job.errors.length} of ${job.failed})`] : [];
  return [...lines, "", ...table(["WORKFLOW", "CODE", "WHY"], job.errors.map((error) => [error.workflowId, error.code, error.message])), ...more];
}

export function bulkListLines(page: BulkJobList): string[] {
  if (page.jobs.length === 0) return ["no bulk jobs"];
  const rows = page.jobs.map((job) => [job.id, job.action, job.status, `${job.done}/${job.matched}`, String(job.failed), time(job.createdAt), filterText(job.filter)]);
  return [...table(["ID", "ACTION", "STATUS", "DONE", "FAILED", "CREATED", "FILTER"], rows), ...(page.nextCursor ? [`more: --cursor ${page.nextCursor}`] : [])];
}
