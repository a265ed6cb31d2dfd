/**
 * The tenants' figures per minute in D1 (migration 0014), for GET /v1/metrics/series. An index entry carries its
 * workflow's counters as absolute totals; what a write adds to them is known only against the row it replaces, so the
 * index write sends, in the same batch (one transaction), a statement that adds that difference to the minute of the
 * entry's `updatedAt` before the upsert replaces the row. A repeated write finds its own row and adds nothing; one
 * the upsert would refuse (an older version) is refused here too; a write that changes no counter writes no minute.
 */
import type { IndexEntry } from "../domain/machine/index-entry";
import { LATENESS_BOUNDS_MS } from "../domain/machine/metrics";
import { addCounts, emptyCounts, OUTCOMES, type SeriesCounts } from "../domain/metrics/series-points";
import type { SeriesRange } from "../domain/metrics/series-range";
import { METRICS_SERIES_MINUTE_MS } from "../domain/contract";
import { METRICS_COLUMNS, metricsValues } from "./metrics-rows";

/** The counters that add up as they are (the lateness histogram's buckets and its max are columns apart). */
const COUNTER_COLUMNS = METRICS_COLUMNS.filter((column) => column !== "lateness_max_ms" && column !== "lateness_buckets");

/** One column per bucket of the lateness histogram, as `workflows.lateness_buckets` holds them in a JSON array. */
export const LATENESS_BUCKET_COLUMNS = [...LATENESS_BOUNDS_MS.map((bound) => `lateness_le_${bound}`), `lateness_over_${LATENESS_BOUNDS_MS.at(-1)}`];

const ADDED_COLUMNS = ["started", ...OUTCOMES, ...COUNTER_COLUMNS, "lateness_max_ms", ...LATENESS_BUCKET_COLUMNS];

/** The entry as written, then the counters it adds to the row it replaces (none when the upsert would refuse it). */
const ENTRY_COLUMNS = ["tenant", "id", "status", "version", "ended_at", "minute_at", ...METRICS_COLUMNS];

const bucketDelta = (i: number) =>
  `COALESCE(json_extract(e.lateness_buckets, '$[${i}]'), 0) - COALESCE(json_extract(w.lateness_buckets, '$[${i}]'), 0) AS ${LATENESS_BUCKET_COLUMNS[i]}`;

/**
 * The largest lateness observed since the row: the entry's max when it grew (a new worst is one of them), else at
 * most the upper bound of the highest bucket that grew, and never more than the workflow's max.
 */
const LATENESS_MAX = `CASE WHEN new_max > old_max THEN new_max
  ELSE MIN(new_max, MAX(0, ${LATENESS_BUCKET_COLUMNS.map((column, i) => `(${column} > 0) * ${LATENESS_BOUNDS_MS[i] ?? "new_max"}`).join(", ")})) END`;

const DELTA_SQL = `WITH e (${ENTRY_COLUMNS.join(", ")}) AS (VALUES (${ENTRY_COLUMNS.map(() => "?").join(", ")})),
  delta AS (
    SELECT e.tenant, e.minute_at, e.status,
      (w.id IS NULL) AS started,
      (e.ended_at IS NOT NULL AND (w.id IS NULL OR (e.version > w.version AND (w.ended_at IS NULL OR w.ended_at <> e.ended_at)))) AS ended,
      ${COUNTER_COLUMNS.map((column) => `e.${column} - COALESCE(w.${column}, 0) AS ${column}`).join(",\n      ")},
      ${LATENESS_BUCKET_COLUMNS.map((_, i) => bucketDelta(i)).join(",\n      ")},
      e.lateness_max_ms AS new_max, COALESCE(w.lateness_max_ms, 0) AS old_max
    FROM e LEFT JOIN workflows AS w ON w.tenant = e.tenant AND w.id = e.id
    WHERE w.id IS NULL OR e.version >= w.version
  )
INSERT INTO metrics_minutes (tenant, minute_at, ${ADDED_COLUMNS.join(", ")})
SELECT tenant, minute_at, started, ${OUTCOMES.map((outcome) => `ended * (status = '${outcome}')`).join(", ")},
  ${COUNTER_COLUMNS.join(", ")}, ${LATENESS_MAX}, ${LATENESS_BUCKET_COLUMNS.join(", ")}
FROM delta
WHERE started OR ended OR ${COUNTER_COLUMNS.map((column) => `${column} <> 0`).join(" OR ")}
ON CONFLICT (tenant, minute_at) DO UPDATE SET
  ${ADDED_COLUMNS.map((column) => (column === "lateness_max_ms" ? `${column} = MAX(${column}, excluded.${column})` : `${column} = ${column} + excluded.${column}`)).join(", ")}`;

/** What writing `entry` adds to its minute: to run in one batch with, and before, the entry's upsert. */
export function seriesDeltaStatement(db: D1Database, entry: IndexEntry): D1PreparedStatement {
  const minuteAt = Math.floor(entry.updatedAt / METRICS_SERIES_MINUTE_MS) * METRICS_SERIES_MINUTE_MS;
  return db.prepare(DELTA_SQL).bind(entry.tenant, entry.id, entry.status, entry.version, entry.endedAt ?? null, minuteAt, ...metricsValues(entry.metrics));
}

const SUMMED_COLUMNS = ADDED_COLUMNS.filter((column) => column !== "lateness_max_ms");

const STEPS_SQL = `SELECT CAST((minute_at - ?) / ? AS INTEGER) AS step,
    ${SUMMED_COLUMNS.map((column) => `SUM(${column}) AS ${column}`).join(", ")}, MAX(lateness_max_ms) AS lateness_max_ms
  FROM metrics_minutes WHERE tenant = ? AND minute_at >= ? AND minute_at < ?
  GROUP BY step`;

type StepRow = Record<string, number>;

/** The tenant's minutes summed per step of `range` (steps with none are absent), over the shards that hold them. */
export async function readTenantSeries(dbs: D1Database[], tenant: string, range: SeriesRange): Promise<Map<number, SeriesCounts>> {
  const shards = await Promise.all(
    dbs.map((db) => db.prepare(STEPS_SQL).bind(range.from, range.stepMs, tenant, range.from, range.to).all<StepRow>()),
  );
  const steps = new Map<number, SeriesCounts>();
  for (const { results } of shards) {
    for (const row of results) {
      const counts = countsOf(row);
      const known = steps.get(row.step!);
      steps.set(row.step!, known ? addCounts(known, counts) : counts);
    }
  }
  return steps;
}

function countsOf(row: StepRow): SeriesCounts {
  const counts = emptyCounts();
  const n = (column: string) => Number(row[column] ?? 0);
  counts.started = n("started");
  for (const outcome of OUTCOMES) counts.ended[outcome] = n(outcome);
  const { figures } = counts;
  figures.attempts = n("step_attempts");
  figures.retries = n("step_retries");
  for (const kind of Object.keys(figures.timeouts) as (keyof typeof figures.timeouts)[]) figures.timeouts[kind] = n(`timeouts_${kind}`);
  figures.compensations = n("compensations");
  figures.escalations = n("escalations");
  figures.lateness = { buckets: LATENESS_BUCKET_COLUMNS.map(n), count: n("lateness_count"), sumMs: n("lateness_sum_ms"), maxMs: n("lateness_max_ms") };
  return counts;
}

/** Deletes minutes older than `before` from one shard, at most `limit` of them; answers how many went. */
export async function pruneMetricsMinutes(db: D1Database, before: number, limit: number): Promise<number> {
  const { meta } = await db
    .prepare("DELETE FROM metrics_minutes WHERE rowid IN (SELECT rowid FROM metrics_minutes WHERE minute_at < ? ORDER BY minute_at LIMIT ?)")
    .bind(before, limit)
    .run();
  return meta.changes;
}
