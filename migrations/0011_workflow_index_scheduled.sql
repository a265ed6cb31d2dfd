-- v1.2: a start may be scheduled for later (`startAt`, `startDelayMs`). The list shows when a scheduled workflow
-- starts, and the open status `scheduled` joins the sweep's partial index (its alarm, lost, is found like any other).
ALTER TABLE workflows ADD COLUMN start_at INTEGER;

DROP INDEX IF EXISTS workflows_open_next_deadline;

CREATE INDEX IF NOT EXISTS workflows_open_next_deadline
  ON workflows (next_deadline_at)
  WHERE status IN ('scheduled', 'running', 'paused', 'compensating', 'needs_attention');
