/**
 * The series' retention: every minute the cron deletes what has grown older than METRICS_SERIES_RETENTION_MS, the
 * tenants' minutes on each index shard and the queues' lag on DB. Bounded per run; a run that finds more than its
 * bound leaves the rest to the next. A failure is logged and left to the next run: the series only grows meanwhile.
 */
import { pruneLagMinutes } from "../admission/queue-lag-minutes";
import { METRICS_SERIES_RETENTION_MS } from "../domain/contract";
import { allIndexDbs } from "./index-shards";
import { pruneMetricsMinutes } from "./metrics-series";

/** Per database and run: a minute's worth for a thousand tenants each minute, far below a run's limits. */
const PRUNE_LIMIT = 1_000;

export async function pruneMetricsSeries(env: Env, now: number): Promise<void> {
  const before = now - METRICS_SERIES_RETENTION_MS;
  const prunes = [...allIndexDbs(env).map((db) => pruneMetricsMinutes(db, before, PRUNE_LIMIT)), pruneLagMinutes(env.DB, before, PRUNE_LIMIT)];
  for (const result of await Promise.allSettled(prunes)) {
    if (result.status === "rejected") console.error(JSON.stringify({ message: "could not prune the metrics series; the next run will", error: String(result.reason) }));
  }
}
