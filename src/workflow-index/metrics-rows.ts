/**
 * The workflows' counters in the D1 index (migration 0007): the columns the index upsert writes with each row,
 * and the per-tenant sums GET /v1/metrics reads, over the tenant's index shards. Each object counts in its own
 * state and its index entry carries the totals, so no step writes to D1 for metrics (see src/domain/machine/metrics.ts).
 */
import { emptyMetrics, LATENESS_BOUNDS_MS, type LatenessHistogram, type WorkflowMetrics } from "../domain/machine/metrics";
import { WORKFLOW_STATUSES, type WorkflowStatus } from "../domain/machine/state";

/** The counter columns of `workflows`, in the order `metricsValues` gives their values. */
export const METRICS_COLUMNS = [
  "step_attempts",
  "step_retries",
  "timeouts_heartbeat",
  "timeouts_start_to_close",
  "timeouts_schedule_to_start",
  "timeouts_stalled",
  "compensations",
  "escalations",
  "lateness_count",
  "lateness_sum_ms",
  "lateness_max_ms",
  "lateness_buckets",
] as const;

/** SQL fragments for the index upsert: the column list, its placeholders and the update of each on conflict. */
export const METRICS_INSERT_COLUMNS = METRICS_COLUMNS.join(", ");
export const METRICS_PLACEHOLDERS = METRICS_COLUMNS.map(() => "?").join(", ");
export const METRICS_UPDATES = METRICS_COLUMNS.map((column) => `${column} = excluded.${column}`).join(", ");

/** An entry without counters (nothing counted yet, or written before they existed) writes zeros. */
export function metricsValues(metrics: WorkflowMetrics = emptyMetrics()): (number | string | null)[] {
  const { timeouts, lateness } = metrics;
  return [
    metrics.attempts,
    metrics.retries,
    timeouts.heartbeat,
    timeouts.start_to_close,
    timeouts.schedule_to_start,
    timeouts.stalled,
    metrics.compensations,
    metrics.escalations,
    lateness?.count ?? 0,
    lateness?.sumMs ?? 0,
    lateness?.maxMs ?? 0,
    lateness ? JSON.stringify(lateness.buckets) : null,
  ];
}

/** A tenant's figures, summed over its index rows. */
export interface TenantMetrics {
  byStatus: Record<WorkflowStatus, number>;
  started: number;
  ended: number;
  totals: WorkflowMetrics & { lateness: LatenessHistogram };
}

type SumsRow = Record<string, number | null>;

/** One bucket's sum over the tenant's rows; a row with no histogram (NULL) adds nothing. */
const BUCKET_SUMS = Array.from({ length: LATENESS_BOUNDS_MS.length + 1 }, (_, i) => `COALESCE(SUM(json_extract(lateness_buckets, '$[${i}]')), 0) AS b${i}`);

const SUMS_SQL = `SELECT COUNT(*) AS started, COUNT(ended_at) AS ended,
    ${METRICS_COLUMNS.filter((column) => column !== "lateness_buckets" && column !== "lateness_max_ms")
      .map((column) => `COALESCE(SUM(${column}), 0) AS ${column}`)
      .join(", ")},
    COALESCE(MAX(lateness_max_ms), 0) AS lateness_max_ms, ${BUCKET_SUMS.join(", ")}
  FROM workflows WHERE tenant = ?`;

const BY_STATUS_SQL = "SELECT status, COUNT(*) AS n FROM workflows WHERE tenant = ? GROUP BY status";

/** A tenant's figures summed over the index shards that hold its rows, read side by side. */
export async function readTenantMetrics(dbs: D1Database[], tenant: string): Promise<TenantMetrics> {
  const shards = await Promise.all(dbs.map((db) => readShardSums(db, tenant)));
  const row: SumsRow = {};
  const byStatus = Object.fromEntries(WORKFLOW_STATUSES.map((status) => [status, 0])) as Record<WorkflowStatus, number>;
  for (const shard of shards) {
    // Every column adds up across shards except the largest lateness, which is the largest of theirs.
    for (const [column, value] of Object.entries(shard.sums)) {
      row[column] = column === "lateness_max_ms" ? Math.max(num(row[column]), num(value)) : num(row[column]) + num(value);
    }
    for (const { status, n } of shard.statuses) {
      if (status in byStatus) byStatus[status as WorkflowStatus] += n;
    }
  }
  return { byStatus, started: num(row.started), ended: num(row.ended), totals: totalsOf(row) };
}

/** One shard's sums of the tenant's rows and its rows per status, in one round trip. */
async function readShardSums(db: D1Database, tenant: string): Promise<{ sums: SumsRow; statuses: { status: string; n: number }[] }> {
  const [sums, statuses] = await db.batch([db.prepare(SUMS_SQL).bind(tenant), db.prepare(BY_STATUS_SQL).bind(tenant)]);
  return { sums: (sums?.results[0] ?? {}) as SumsRow, statuses: (statuses?.results ?? []) as { status: string; n: number }[] };
}

function totalsOf(row: SumsRow): TenantMetrics["totals"] {
  const lateness: LatenessHistogram = {
    buckets: BUCKET_SUMS.map((_, i) => num(row[`b${i}`])),
    count: num(row.lateness_count),
    sumMs: num(row.lateness_sum_ms),
    maxMs: num(row.lateness_max_ms),
  };
  return {
    attempts: num(row.step_attempts),
    retries: num(row.step_retries),
    timeouts: {
      heartbeat: num(row.timeouts_heartbeat),
      start_to_close: num(row.timeouts_start_to_close),
      schedule_to_start: num(row.timeouts_schedule_to_start),
      stalled: num(row.timeouts_stalled),
    },
    compensations: num(row.compensations),
    escalations: num(row.escalations),
    lateness,
  };
}

const num = (value: number | null | undefined): number => Number(value ?? 0);
