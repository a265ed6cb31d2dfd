-- GET /v1/targets: each tenant's target hosts whose circuit breaker has seen trouble. The breaker's Durable Object
-- (one per tenant and host) is the truth and writes its row here when it changes; the version-guarded upsert means
-- a late or repeated write cannot move a row back.
CREATE TABLE IF NOT EXISTS targets (
  tenant TEXT NOT NULL,
  host TEXT NOT NULL,
  state TEXT NOT NULL,
  failures INTEGER NOT NULL,
  open_until INTEGER,
  parked INTEGER NOT NULL,
  version INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, host)
);
