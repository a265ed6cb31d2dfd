/**
 * The object's own SQLite schema, as an ordered list. Applied in the constructor and recorded in
 * `schema_migrations`, so an object created by an older deployment catches up on its next start.
 * Never edit an applied entry: append a new one (and fold it into BASELINE below).
 */
export const SCHEMA_MIGRATIONS: readonly string[] = [
  `CREATE TABLE workflow (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     tenant TEXT NOT NULL,
     id TEXT NOT NULL,
     status TEXT NOT NULL,
     version INTEGER NOT NULL,
     request_hash TEXT NOT NULL,
     next_deadline_at INTEGER,
     state_json TEXT NOT NULL
   );
   CREATE TABLE steps (
     step_id TEXT PRIMARY KEY,
     position INTEGER NOT NULL,
     state_json TEXT NOT NULL
   );
   CREATE TABLE events (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     at INTEGER NOT NULL,
     type TEXT NOT NULL,
     step_id TEXT,
     attempt INTEGER,
     data_json TEXT
   );`,
  // Writes for D1 that must not be lost: stored in the same transaction as the state they describe.
  `CREATE TABLE outbox (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL,
     payload_json TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at INTEGER NOT NULL
   );`,
  // The plan never changes after the start, so it is written once instead of with every transition.
  `CREATE TABLE plan (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     plan_json TEXT NOT NULL
   );`,
  // v1.1: events waiting for a wait (one row each, written only when they change), and the first answer to each
  // event id, so a repeated send is answered the same and delivered once.
  `CREATE TABLE inbox (
     seq INTEGER PRIMARY KEY,
     event_json TEXT NOT NULL
   );
   CREATE TABLE event_receipts (
     id TEXT PRIMARY KEY,
     answer_json TEXT NOT NULL,
     at INTEGER NOT NULL
   );`,
  // v1.2: a map's items, one row each from the map's start (see item-rows.ts); undo walks them by ended_seq. The
  // input, which never changes, is written once beside the plan instead of with every transition.
  `CREATE TABLE map_items (
     step_id TEXT NOT NULL,
     idx INTEGER NOT NULL,
     status TEXT NOT NULL,
     attempt INTEGER NOT NULL,
     ended_seq INTEGER,
     effect INTEGER NOT NULL DEFAULT 0,
     output_json TEXT,
     error_json TEXT,
     PRIMARY KEY (step_id, idx)
   );
   CREATE INDEX map_items_by_status ON map_items (step_id, status, idx);
   CREATE INDEX map_items_by_end ON map_items (step_id, ended_seq);
   ALTER TABLE plan ADD COLUMN input_json TEXT;`,
  // What each attempt sent and what came back, by attempt number (see domain/exchange): a column of the step's row,
  // which the commit recording an attempt's report writes anyway, so keeping it costs no row.
  `ALTER TABLE steps ADD COLUMN exchanges_json TEXT;`,
  // History as one row per commit, holding all the events it appended (see history-rows.ts): SQLite bills each row
  // written, and a step's commit appends about three. An older object's events move over, one row each.
  `CREATE TABLE history (
     last_seq INTEGER PRIMARY KEY,
     first_seq INTEGER NOT NULL,
     at INTEGER NOT NULL,
     events_json TEXT NOT NULL
   );
   -- An event's seq is its place in the whole history: a row's key (its rowid, so no index is written, and no
   -- AUTOINCREMENT sequence row) is its last event's. Nothing deletes from history, so a seq is never reused.
   INSERT INTO history (last_seq, first_seq, at, events_json)
     SELECT seq, seq, at, json_array(json_object('type', type, 'stepId', step_id, 'attempt', attempt, 'data', json(data_json))) FROM events;
   DROP TABLE events;`,
  // The plan's open steps ride on the workflow's row, which every commit writes (see step-rows.ts): a step gets its
  // own row when it ends, or with an attempt's exchange, instead of also when it starts.
  `ALTER TABLE workflow ADD COLUMN open_steps_json TEXT;`,
];

/**
 * A new object's schema: the tables the entries up to BASELINE_VERSION build, in one statement. A new object gets it
 * with one `schema_migrations` row instead of running every entry and recording each (rows written on a workflow's
 * start); an object an older deployment created still catches up entry by entry. An entry appended later applies to
 * both; fold it in here and move BASELINE_VERSION with it, so a new object keeps getting one row
 * (test/workflow/workflow-schema.test.ts holds the baseline to what the entries build).
 *
 * It differs from the entries only where that saves rows on every step, in ways the same statements read and write
 * on either shape:
 * - `outbox.seq` is the rowid, without AUTOINCREMENT, whose `sqlite_sequence` row is a second row written with every
 *   effect. A delivery deletes its row by seq after an await, so the store gives each new row a seq past every one
 *   its instance has seen (outbox-rows.ts), which a rowid of the largest + 1 alone would not be.
 * - `steps` is WITHOUT ROWID: the table is its primary key's tree, so a step's first insert writes one row, where a
 *   rowid table writes the row and its `step_id` index entry. Nothing reads a step's rowid. A large row (an attempt's
 *   exchanges) spills to overflow pages sooner in such a table: more pages read, not more rows.
 */
export const BASELINE_VERSION = 8;
const BASELINE = `CREATE TABLE workflow (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     tenant TEXT NOT NULL,
     id TEXT NOT NULL,
     status TEXT NOT NULL,
     version INTEGER NOT NULL,
     request_hash TEXT NOT NULL,
     next_deadline_at INTEGER,
     state_json TEXT NOT NULL,
     open_steps_json TEXT
   );
   CREATE TABLE steps (
     step_id TEXT PRIMARY KEY,
     position INTEGER NOT NULL,
     state_json TEXT NOT NULL,
     exchanges_json TEXT
   ) WITHOUT ROWID;
   CREATE TABLE history (
     last_seq INTEGER PRIMARY KEY,
     first_seq INTEGER NOT NULL,
     at INTEGER NOT NULL,
     events_json TEXT NOT NULL
   );
   CREATE TABLE outbox (
     seq INTEGER PRIMARY KEY,
     kind TEXT NOT NULL,
     payload_json TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at INTEGER NOT NULL
   );
   CREATE TABLE plan (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     plan_json TEXT NOT NULL,
     input_json TEXT
   );
   CREATE TABLE inbox (
     seq INTEGER PRIMARY KEY,
     event_json TEXT NOT NULL
   );
   CREATE TABLE event_receipts (
     id TEXT PRIMARY KEY,
     answer_json TEXT NOT NULL,
     at INTEGER NOT NULL
   );
   CREATE TABLE map_items (
     step_id TEXT NOT NULL,
     idx INTEGER NOT NULL,
     status TEXT NOT NULL,
     attempt INTEGER NOT NULL,
     ended_seq INTEGER,
     effect INTEGER NOT NULL DEFAULT 0,
     output_json TEXT,
     error_json TEXT,
     PRIMARY KEY (step_id, idx)
   );
   CREATE INDEX map_items_by_status ON map_items (step_id, status, idx);
   CREATE INDEX map_items_by_end ON map_items (step_id, ended_seq);`;

const BOOKKEEPING = "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)";

/**
 * Brings the schema up to date: a new object's in one batch from the baseline, an older object's by the entries it
 * lacks. Returns the rows its statements wrote, for the store's counts: a batch's cursor counts the rows of its last
 * statement only, the records here; the CREATE statements' entries in `sqlite_master` are not counted.
 */
export function applySchemaMigrations(sql: SqlStorage, exists = schemaExists(sql)): number {
  // Inside the caller's transaction, so a crash leaves no object with half a schema.
  if (!exists) return createFromBaseline(sql);
  const applied = sql.exec<{ version: number }>("SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations").one().version;
  const pending = SCHEMA_MIGRATIONS.slice(applied);
  if (pending.length === 0) return 0;
  // One call for everything missing, with its records.
  const now = Date.now();
  const records = pending.map((_, index) => `(${applied + index + 1}, ${now})`).join(", ");
  return sql.exec(`${pending.join("\n")}\nINSERT INTO schema_migrations (version, applied_at) VALUES ${records};`).rowsWritten;
}

/** The baseline, any entry appended after it, and one record of the version reached: one call, one row. */
function createFromBaseline(sql: SqlStorage): number {
  const later = SCHEMA_MIGRATIONS.slice(BASELINE_VERSION).join("\n");
  const record = `INSERT INTO schema_migrations (version, applied_at) VALUES (${SCHEMA_MIGRATIONS.length}, ${Date.now()});`;
  return sql.exec(`${BOOKKEEPING};\n${BASELINE}\n${later}\n${record}`).rowsWritten;
}

export function schemaExists(sql: SqlStorage): boolean {
  return sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").toArray().length > 0;
}
