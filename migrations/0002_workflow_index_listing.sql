-- Listing by name and by status reads newest first with (created_at, id) as the cursor.
DROP INDEX IF EXISTS workflows_tenant_status_created;

CREATE INDEX IF NOT EXISTS workflows_tenant_status_created
  ON workflows (tenant, status, created_at DESC, id DESC);

CREATE INDEX IF NOT EXISTS workflows_tenant_name_created
  ON workflows (tenant, name, created_at DESC, id DESC);

-- The sweep only looks at workflows that have not ended.
DROP INDEX IF EXISTS workflows_next_deadline;

CREATE INDEX IF NOT EXISTS workflows_open_next_deadline
  ON workflows (next_deadline_at)
  WHERE status IN ('running', 'compensating', 'needs_attention');
