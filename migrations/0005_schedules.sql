-- The tenant's schedules, for GET /v1/schedules; each schedule's own state lives in its Durable Object.
CREATE TABLE IF NOT EXISTS schedules (
  tenant TEXT NOT NULL,
  id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, id)
);
