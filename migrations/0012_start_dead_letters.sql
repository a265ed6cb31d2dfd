-- v1.2: the STARTS queue's dead letters, the messages that can never start (a bad body, an unknown tenant, a refused
-- definition, a conflicting id) or that the queue gave up on, kept for an operator (GET /v1/starts/dead-letters).
-- tenant is the message's tenant when the deployment knows it, and '' (no tenant's) when it does not: those are
-- listed to the tenant STARTS_DEAD_LETTER_TENANT names. A message recorded again (delivered again before its ack
-- landed) updates its row. Rows older than 30 days are deleted as new ones are recorded.
CREATE TABLE start_dead_letters (
  tenant TEXT NOT NULL,
  message_id TEXT NOT NULL,
  -- The tenant the message named, as sent (null when it named none); the workflow id it would have started.
  named_tenant TEXT,
  workflow_id TEXT,
  error_code TEXT NOT NULL,
  error_message TEXT NOT NULL,
  error_details_json TEXT,
  -- The message body as JSON, cut at 8 KiB (body_truncated = 1 then).
  body TEXT NOT NULL,
  body_truncated INTEGER NOT NULL,
  -- How many times the queue had delivered the message when it was last recorded.
  attempts INTEGER NOT NULL,
  first_seen_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, message_id)
);

-- Newest first, a page at a time; also what the 30-day clean-up deletes by.
CREATE INDEX start_dead_letters_recent ON start_dead_letters (tenant, first_seen_at DESC, message_id DESC);
