// How the service's own figures read for a person: metrics now and over time, target breakers, worker pools, and
// the starts that could never start.
import type { DeadLetterList, MapItemsPage, Metrics, MetricsSeries, PoolList, TargetList } from "../api-types";
import { compactJson, duration, fields, relative, table, time } from "../format";

const more = (cursor: string | undefined): string[] => (cursor ? [`more: --cursor ${cursor}`] : []);
const ms = (value: number | null): string => (value === null ? "-" : duration(value));

export function metricsLines(metrics: Metrics): string[] {
  const statuses = Object.entries(metrics.workflows.byStatus).map(([status, count]) => `${status} ${count}`);
  const timeouts = Object.entries(metrics.steps.timeouts).map(([kind, count]) => `${kind} ${count}`);
  const lateness = metrics.detectionLatenessMs;
  return fields([
    ["workflows", `${metrics.workflows.started} started, ${metrics.workflows.ended} ended`],
    ["by status", statuses.join(", ")],
    ["attempts", `${metrics.steps.attempts} (${metrics.steps.retries} retries)`],
    ["timeouts", timeouts.join(", ")],
    ["compensations", String(metrics.compensations)],
    ["escalations", String(metrics.escalations)],
    ["detection lateness", `p50 ${ms(lateness.p50)}, p99 ${ms(lateness.p99)}, max ${ms(lateness.max)} (${lateness.count} deadlines)`],
    ["pools", metrics.pools.length === 0 ? "none" : metrics.pools.map((pool) => `${pool.name} ${pool.pending} pending`).join(", ")],
    ["as of", time(metrics.asOf)],
  ]);
}

/** One row per point, oldest first, then the range's total. */
export function seriesLines(series: MetricsSeries): string[] {
  const row = (at: string, point: MetricsSeries["total"]) => [
    at,
    String(point.started),
    String(point.completed),
    String(point.failed + point.compensated + point.cancelled + point.terminated),
    String(point.attempts),
    String(point.retries),
    String(Object.values(point.timeouts).reduce((sum, count) => sum + count, 0)),
    point.queueLagMs === null ? "-" : duration(point.queueLagMs),
  ];
  const rows = [...series.series.map((point) => row(time(point.at), point)), row("total", series.total)];
  return [`${time(series.from)} to ${time(series.to)}, a point every ${duration(series.stepMs)}`, ...table(["AT", "STARTED", "COMPLETED", "UNSUCCESSFUL", "ATTEMPTS", "RETRIES", "TIMEOUTS", "QUEUE LAG"], rows)];
}

export function targetListLines(page: TargetList, now: number): string[] {
  if (page.targets.length === 0) return ["no target has seen transient failures"];
  const rows = page.targets.map((target) => [target.host, target.state, String(target.failures), String(target.parked), target.openUntil === undefined ? "-" : relative(target.openUntil, now)]);
  return [...table(["HOST", "STATE", "FAILURES", "PARKED", "OPEN UNTIL"], rows), ...more(page.nextCursor)];
}

export function poolListLines(list: PoolList, now: number): string[] {
  if (list.pools.length === 0) return ["no pools"];
  const rows = list.pools.map((pool) => [
    pool.name,
    String(pool.pending),
    pool.oldestPendingAgeMs === null ? "-" : duration(pool.oldestPendingAgeMs),
    String(pool.running),
    pool.workers.length === 0 ? "none" : pool.workers.map((worker) => `${worker.id} (${relative(worker.lastPollAt, now)})`).join(", "),
  ]);
  return table(["POOL", "PENDING", "OLDEST", "RUNNING", "WORKERS"], rows);
}

export function deadLetterLines(page: DeadLetterList): string[] {
  if (page.deadLetters.length === 0) return ["no dead letters"];
  const rows = page.deadLetters.map((letter) => [time(letter.lastSeenAt), letter.workflowId ?? "-", String(letter.attempts), `${letter.error.code}: ${letter.error.message}`]);
  return [...table(["LAST SEEN", "WORKFLOW", "ATTEMPTS", "ERROR"], rows), ...more(page.nextCursor)];
}

/** A map's items, one row each: index, status, attempt, then the output or the error. */
export function mapItemLines(page: MapItemsPage): string[] {
  if (page.items.length === 0) return ["no items"];
  const rows = page.items.map((item) => [String(item.index), item.status, String(item.attempt), item.error !== undefined ? compactJson(item.error) : item.output !== undefined ? compactJson(item.output) : ""]);
  return [...table(["ITEM", "STATUS", "ATTEMPT", "OUTPUT OR ERROR"], rows), ...more(page.nextCursor)];
}
