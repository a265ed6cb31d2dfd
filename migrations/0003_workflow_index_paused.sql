-- v1.1 adds the open status `paused` (and the terminal `terminated`): the sweep's partial index must cover it.
DROP INDEX IF EXISTS workflows_open_next_deadline;

CREATE INDEX IF NOT EXISTS workflows_open_next_deadline
  ON workflows (next_deadline_at)
  WHERE status IN ('running', 'paused', 'compensating', 'needs_attention');
