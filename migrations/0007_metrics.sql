-- GET /v1/metrics: each workflow's own counters, written with its index row by the same version-guarded upsert.
-- They are absolute (never deltas), so a repeated or late write cannot count anything twice. The lateness
-- histogram's per-bucket counts are a JSON array, one count per bound of LATENESS_BOUNDS_MS (src/domain/metrics.ts)
-- and a last one for +Inf; NULL while nothing was overdue. Rows written before this migration count zero.
ALTER TABLE workflows ADD COLUMN step_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN step_retries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN timeouts_heartbeat INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN timeouts_start_to_close INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN timeouts_schedule_to_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN timeouts_stalled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN compensations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN escalations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN lateness_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN lateness_sum_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN lateness_max_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN lateness_buckets TEXT;
