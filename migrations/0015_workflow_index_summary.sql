-- v1.2: the list triages. An open workflow worth an operator's attention carries one line of why it is open
-- (`summary`: "retrying notify 6/8 after 503", "waiting for event approved", "needs attention: charge failed (422)"),
-- the step it names, that step's attempts used and allowed, and when the supervisor next acts on it. They are
-- written with the entry (only when the line changes, or when the entry is written anyway) and cleared when the
-- workflow leaves that state. `next_deadline_at` stays the sweep's lease; `summary_deadline_at` is the list's.
ALTER TABLE workflows ADD COLUMN summary TEXT;
ALTER TABLE workflows ADD COLUMN summary_step_id TEXT;
ALTER TABLE workflows ADD COLUMN summary_attempts_used INTEGER;
ALTER TABLE workflows ADD COLUMN summary_attempts_max INTEGER;
ALTER TABLE workflows ADD COLUMN summary_deadline_at INTEGER;
