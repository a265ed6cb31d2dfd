-- v1.2: a child workflow (started by a `workflow` step) names its parent, so the list can filter `?parentId=`.
ALTER TABLE workflows ADD COLUMN parent_id TEXT;

CREATE INDEX IF NOT EXISTS workflows_tenant_parent_created
  ON workflows (tenant, parent_id, created_at DESC, id DESC)
  WHERE parent_id IS NOT NULL;
