-- Index of workflows across all tenants. The per-workflow source of truth lives in
-- the WorkflowScheduler Durable Object; this table serves listing and deadline scans.
CREATE TABLE IF NOT EXISTS workflows (
  tenant TEXT NOT NULL,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  ended_at INTEGER,
  next_deadline_at INTEGER,
  version INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, id)
);

CREATE INDEX IF NOT EXISTS workflows_tenant_created
  ON workflows (tenant, created_at DESC, id DESC);

CREATE INDEX IF NOT EXISTS workflows_tenant_status_created
  ON workflows (tenant, status, created_at DESC);

CREATE INDEX IF NOT EXISTS workflows_next_deadline
  ON workflows (next_deadline_at);
