-- GET /v1/metrics/series: each tenant's figures per minute, kept 14 days. A row is a minute in which some workflow's
-- index entry moved its counters (migration 0007): the index write adds, in the same D1 batch, the difference between
-- the entry it writes and the row it replaces (src/workflow-index/metrics-series.ts). Computed against the row in D1,
-- inside the batch's transaction, the difference of a repeated or late write is nothing, so a minute never counts
-- anything twice. Kept on the shard that holds the workflow's row, like the counters it follows.
CREATE TABLE metrics_minutes (
  tenant TEXT NOT NULL,
  -- The minute's start (epoch ms, a multiple of 60 000) of the entry's updated_at: when the object made the change.
  minute_at INTEGER NOT NULL,
  -- Workflows whose first index entry was written, and workflows that ended, by how they ended.
  started INTEGER NOT NULL DEFAULT 0,
  completed INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  compensated INTEGER NOT NULL DEFAULT 0,
  cancelled INTEGER NOT NULL DEFAULT 0,
  terminated INTEGER NOT NULL DEFAULT 0,
  -- The counters of GET /v1/metrics, as added in the minute.
  step_attempts INTEGER NOT NULL DEFAULT 0,
  step_retries INTEGER NOT NULL DEFAULT 0,
  timeouts_heartbeat INTEGER NOT NULL DEFAULT 0,
  timeouts_start_to_close INTEGER NOT NULL DEFAULT 0,
  timeouts_schedule_to_start INTEGER NOT NULL DEFAULT 0,
  timeouts_stalled INTEGER NOT NULL DEFAULT 0,
  compensations INTEGER NOT NULL DEFAULT 0,
  escalations INTEGER NOT NULL DEFAULT 0,
  -- Detection lateness: how many, their sum, an upper bound of the largest (exact when it was a workflow's new
  -- worst), and one count per bucket of LATENESS_BOUNDS_MS (src/domain/machine/metrics.ts), the last over 60 s.
  lateness_count INTEGER NOT NULL DEFAULT 0,
  lateness_sum_ms INTEGER NOT NULL DEFAULT 0,
  lateness_max_ms INTEGER NOT NULL DEFAULT 0,
  lateness_le_10 INTEGER NOT NULL DEFAULT 0,
  lateness_le_25 INTEGER NOT NULL DEFAULT 0,
  lateness_le_50 INTEGER NOT NULL DEFAULT 0,
  lateness_le_100 INTEGER NOT NULL DEFAULT 0,
  lateness_le_250 INTEGER NOT NULL DEFAULT 0,
  lateness_le_500 INTEGER NOT NULL DEFAULT 0,
  lateness_le_1000 INTEGER NOT NULL DEFAULT 0,
  lateness_le_2500 INTEGER NOT NULL DEFAULT 0,
  lateness_le_5000 INTEGER NOT NULL DEFAULT 0,
  lateness_le_10000 INTEGER NOT NULL DEFAULT 0,
  lateness_le_30000 INTEGER NOT NULL DEFAULT 0,
  lateness_le_60000 INTEGER NOT NULL DEFAULT 0,
  lateness_over_60000 INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, minute_at)
);

-- What the minute's clean-up deletes by: every tenant's minutes older than the retention.
CREATE INDEX metrics_minutes_by_minute ON metrics_minutes (minute_at);

-- The task queues' worst lag sampled in each minute (the deployment's, shared by every tenant: the gauge back-pressure
-- answers to), written by the queue-lag monitor. Only DB holds rows.
CREATE TABLE queue_lag_minutes (
  minute_at INTEGER PRIMARY KEY,
  max_lag_ms INTEGER NOT NULL
);
