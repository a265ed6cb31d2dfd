/**
 * A bulk job's own storage, the only module of the job that speaks SQL: its spec, where it is in the index (the
 * cursor of the next page), and one row per matching workflow. A row is written as its page is read and goes
 * `pending` → `acting` (written before the call is made) → `done` or `failed`. One row per workflow id is what makes
 * the counts add up and a workflow acted on at most once: a page read again after a restart adds no row, and a row
 * left `acting` by an instance that died is settled by looking, never by counting it again.
 */
import { BULK_ERRORS_SHOWN } from "../domain/contract";
import { BulkJobSpecSchema, type BulkError, type BulkJobSpec, type BulkProgress } from "../domain/bulk/job";
import type { BulkOutcome } from "../domain/bulk/actions";
import type { ListPosition } from "../workflow-index/d1-index";

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS job (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1), spec_json TEXT NOT NULL, cursor_json TEXT,
    listed INTEGER NOT NULL DEFAULT 0, indexed INTEGER NOT NULL DEFAULT 0, ended_at INTEGER
  );
  CREATE TABLE IF NOT EXISTS targets (
    workflow_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, state TEXT NOT NULL, acting_at INTEGER,
    tries INTEGER NOT NULL DEFAULT 0, error_code TEXT, error_message TEXT
  );
  CREATE INDEX IF NOT EXISTS targets_by_state ON targets (state, seq);`;

type JobRecord = { spec_json: string; cursor_json: string | null; listed: number; indexed: number; ended_at: number | null };

/** A workflow the job was acting on when its instance stopped: whether that action landed is not known. */
export interface UncertainTarget {
  workflowId: string;
  actingAt: number;
  /** Calls made on it so far, this uncertain one included. */
  tries: number;
}

export class BulkRows {
  private readonly sql: SqlStorage;
  /**
   * The tables are made by the job's creation only: an object asked about a job it does not hold (another tenant's
   * id, a made-up one) stays empty, with nothing stored.
   */
  private hasSchema: boolean;

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
    this.hasSchema = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'job'").one().n > 0;
  }

  create(spec: BulkJobSpec): void {
    this.storage.transactionSync(() => {
      this.sql.exec(SCHEMA);
      this.sql.exec("INSERT INTO job (singleton, spec_json) VALUES (1, ?)", JSON.stringify(spec));
    });
    this.hasSchema = true;
  }

  spec(): BulkJobSpec | undefined {
    const record = this.record();
    return record && (BulkJobSpecSchema.parse(JSON.parse(record.spec_json)) as BulkJobSpec);
  }

  /** Where the next page of the index starts; undefined before the first. */
  cursor(): ListPosition | undefined {
    const json = this.record()?.cursor_json;
    return json ? (JSON.parse(json) as ListPosition) : undefined;
  }

  /** Every page of the index has been read. */
  listed(): boolean {
    return this.record()?.listed === 1;
  }

  indexed(): boolean {
    return this.record()?.indexed === 1;
  }

  setIndexed(): void {
    this.sql.exec("UPDATE job SET indexed = 1");
  }

  /** One page's matches and the cursor past them, together: a page is never half recorded. */
  addPage(workflowIds: readonly string[], next: ListPosition | undefined): void {
    this.storage.transactionSync(() => {
      let seq = this.sql.exec<{ n: number }>("SELECT COALESCE(MAX(seq), 0) AS n FROM targets").one().n;
      for (const id of workflowIds) this.sql.exec("INSERT OR IGNORE INTO targets (workflow_id, seq, state) VALUES (?, ?, 'pending')", id, ++seq);
      if (next) this.sql.exec("UPDATE job SET cursor_json = ?", JSON.stringify(next));
      else this.sql.exec("UPDATE job SET listed = 1");
    });
  }

  /** The next workflows to act on, in the order they were matched. */
  pending(limit: number): string[] {
    return this.sql.exec<{ workflow_id: string }>("SELECT workflow_id FROM targets WHERE state = 'pending' ORDER BY seq LIMIT ?", limit).toArray().map((row) => row.workflow_id);
  }

  uncertain(): UncertainTarget[] {
    return this.sql
      .exec<{ workflow_id: string; acting_at: number; tries: number }>("SELECT workflow_id, acting_at, tries FROM targets WHERE state = 'acting' ORDER BY seq")
      .toArray()
      .map((row) => ({ workflowId: row.workflow_id, actingAt: row.acting_at, tries: row.tries }));
  }

  /**
   * Written before the call goes out (the object's output gate holds the call until this is durable). `acting_at`
   * keeps the first call's time: a look-up after a later call that got no answer covers every call made.
   */
  markActing(workflowId: string, at: number): void {
    this.sql.exec("UPDATE targets SET state = 'acting', acting_at = COALESCE(acting_at, ?), tries = tries + 1 WHERE workflow_id = ?", at, workflowId);
  }

  /** An uncertain action could not be looked up either: it counts as a try, so a workflow that never answers ends. */
  triedAgain(workflowId: string): void {
    this.sql.exec("UPDATE targets SET tries = tries + 1 WHERE workflow_id = ?", workflowId);
  }

  settle(workflowId: string, outcome: BulkOutcome): void {
    if (outcome.done) this.sql.exec("UPDATE targets SET state = 'done' WHERE workflow_id = ?", workflowId);
    else this.sql.exec("UPDATE targets SET state = 'failed', error_code = ?, error_message = ? WHERE workflow_id = ?", outcome.error.code, outcome.error.message, workflowId);
  }

  end(at: number): void {
    this.sql.exec("UPDATE job SET ended_at = ? WHERE ended_at IS NULL", at);
  }

  endedAt(): number | undefined {
    return this.record()?.ended_at ?? undefined;
  }

  progress(): BulkProgress {
    const counts = this.sql
      .exec<{ matched: number; done: number; failed: number }>(
        "SELECT COUNT(*) AS matched, COUNT(*) FILTER (WHERE state = 'done') AS done, COUNT(*) FILTER (WHERE state = 'failed') AS failed FROM targets",
      )
      .one();
    const endedAt = this.endedAt();
    return { ...counts, listed: this.listed(), errors: this.errors(), ...(endedAt === undefined ? {} : { endedAt }) };
  }

  /** The first refusals, in the order the workflows were matched. */
  private errors(): BulkError[] {
    return this.sql
      .exec<{ workflow_id: string; error_code: string; error_message: string }>(
        "SELECT workflow_id, error_code, error_message FROM targets WHERE state = 'failed' ORDER BY seq LIMIT ?",
        BULK_ERRORS_SHOWN,
      )
      .toArray()
      .map((row) => ({ workflowId: row.workflow_id, code: row.error_code, message: row.error_message }));
  }

  private record(): JobRecord | undefined {
    if (!this.hasSchema) return undefined;
    return this.sql.exec<JobRecord>("SELECT spec_json, cursor_json, listed, indexed, ended_at FROM job").toArray()[0];
  }
}
