/** The breaker object's SQLite storage: its state, the steps parked on it, and how far the listing in D1 is behind. */
import { BreakerStateSchema, type BreakerState, type Caller, type CircuitState } from "../domain/breaker/machine";

/** The object's own schema, as an ordered list recorded in `schema_migrations`. Never edit an entry: append. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE breaker (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     state_json TEXT NOT NULL,
     listing_json TEXT NOT NULL
   );
   CREATE TABLE parked (
     workflow_id TEXT NOT NULL,
     step_id TEXT NOT NULL,
     since INTEGER NOT NULL,
     PRIMARY KEY (workflow_id, step_id)
   );
   CREATE INDEX parked_by_since ON parked (since);`,
];

/**
 * Where the listing in D1 stands: the version last written and when, and when the next write is due (absent when
 * none is). D1 is only the index: a write that fails is tried again by the alarm, never lost.
 */
export interface ListingState {
  writtenVersion: number;
  writtenState?: CircuitState;
  writtenAt?: number;
  dueAt?: number;
  failures: number;
}

export class BreakerStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
    const applied = sql.exec<{ version: number }>("SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations").one().version;
    MIGRATIONS.forEach((statement, index) => {
      if (index + 1 <= applied) return;
      sql.exec(statement);
      sql.exec("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", index + 1, Date.now());
    });
  }

  load(): { breaker: BreakerState; listing: ListingState } | undefined {
    const row = this.sql.exec<{ state_json: string; listing_json: string }>("SELECT state_json, listing_json FROM breaker").toArray()[0];
    if (!row) return undefined;
    return { breaker: BreakerStateSchema.parse(JSON.parse(row.state_json)), listing: JSON.parse(row.listing_json) as ListingState };
  }

  save(breaker: BreakerState, listing: ListingState): void {
    this.sql.exec(
      "INSERT INTO breaker (singleton, state_json, listing_json) VALUES (1, ?, ?) ON CONFLICT (singleton) DO UPDATE SET state_json = excluded.state_json, listing_json = excluded.listing_json",
      JSON.stringify(breaker),
      JSON.stringify(listing),
    );
  }

  /** Parks a step; one parked again keeps its place in the line (and its `since`). Whether a row was added. */
  park(caller: Caller, now: number): boolean {
    return this.sql.exec("INSERT OR IGNORE INTO parked (workflow_id, step_id, since) VALUES (?, ?, ?)", caller.workflowId, caller.stepId, now).rowsWritten > 0;
  }

  parkedCount(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM parked").one().n;
  }

  /** The longest parked first. */
  oldest(limit: number): Caller[] {
    return this.sql
      .exec<{ workflow_id: string; step_id: string }>("SELECT workflow_id, step_id FROM parked ORDER BY since, workflow_id, step_id LIMIT ?", limit)
      .toArray()
      .map((row) => ({ workflowId: row.workflow_id, stepId: row.step_id }));
  }

  unpark(callers: Caller[]): void {
    for (const caller of callers) this.sql.exec("DELETE FROM parked WHERE workflow_id = ? AND step_id = ?", caller.workflowId, caller.stepId);
  }
}
