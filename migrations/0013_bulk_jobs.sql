-- v1.2: a tenant's bulk jobs, newest first, for GET /v1/bulk; each job's progress lives in its own object.
CREATE TABLE bulk_jobs (
  tenant TEXT NOT NULL,
  id TEXT NOT NULL,
  action TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, id)
);
CREATE INDEX bulk_jobs_newest_first ON bulk_jobs (tenant, created_at DESC, id DESC);
