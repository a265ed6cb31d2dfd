-- Outbound events: each tenant's webhook subscriptions, and a record of every (webhook, event) delivery. The
-- consumer skips a pair already recorded delivered or failed, so a message delivered twice posts nothing twice.
CREATE TABLE IF NOT EXISTS webhooks (
  tenant TEXT NOT NULL,
  id TEXT NOT NULL,
  url TEXT NOT NULL,
  events_json TEXT NOT NULL,
  secret TEXT NOT NULL,
  -- Since when every delivery to it failed (null after a success): a day of that and events are given up at once.
  failing_since INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, id)
);

-- status: delivered | failing (retried) | failed (given up). Old rows are not pruned yet.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  tenant TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  last_status INTEGER,
  last_error TEXT,
  first_at INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, webhook_id, event_id)
);

-- GET /v1/webhooks/{id}/deliveries: newest first.
CREATE INDEX IF NOT EXISTS webhook_deliveries_recent ON webhook_deliveries (tenant, webhook_id, first_at DESC);
