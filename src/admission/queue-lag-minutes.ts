/**
 * The task queues' worst lag per minute in D1 (`queue_lag_minutes`, migration 0014, on DB only), for
 * GET /v1/metrics/series. The deployment's gauge, shared by every tenant as the queues are: the queue-lag monitor
 * writes it, each minute as the largest sample it saw, so a minute written twice keeps the larger.
 */
import type { SeriesRange } from "../domain/metrics/series-range";

export interface LagMinute {
  /** The minute's start, epoch ms. */
  minuteAt: number;
  lagMs: number;
}

const UPSERT_SQL = `INSERT INTO queue_lag_minutes (minute_at, max_lag_ms) VALUES (?, ?)
  ON CONFLICT (minute_at) DO UPDATE SET max_lag_ms = MAX(max_lag_ms, excluded.max_lag_ms)`;

export async function recordLagMinutes(db: D1Database, minutes: LagMinute[]): Promise<void> {
  if (minutes.length === 0) return;
  await db.batch(minutes.map(({ minuteAt, lagMs }) => db.prepare(UPSERT_SQL).bind(minuteAt, Math.round(lagMs))));
}

/** The worst lag of each step of `range` that had a sample (steps without one are absent). */
export async function readLagSteps(db: D1Database, range: SeriesRange): Promise<Map<number, number>> {
  const { results } = await db
    .prepare(
      `SELECT CAST((minute_at - ?) / ? AS INTEGER) AS step, MAX(max_lag_ms) AS lag FROM queue_lag_minutes
       WHERE minute_at >= ? AND minute_at < ? GROUP BY step`,
    )
    .bind(range.from, range.stepMs, range.from, range.to)
    .all<{ step: number; lag: number }>();
  return new Map(results.map((row) => [row.step, row.lag]));
}

/** Deletes the minutes older than `before`, at most `limit`; answers how many went. */
export async function pruneLagMinutes(db: D1Database, before: number, limit: number): Promise<number> {
  const { meta } = await db
    .prepare("DELETE FROM queue_lag_minutes WHERE minute_at IN (SELECT minute_at FROM queue_lag_minutes WHERE minute_at < ? ORDER BY minute_at LIMIT ?)")
    .bind(before, limit)
    .run();
  return meta.changes;
}
