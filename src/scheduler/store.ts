import type { IndexEntry } from "../domain/index-entry";
import type { HistoryEntryFields } from "../domain/history";
import { StoredStepSchema, withStepKinds, WorkflowFieldsSchema, type AttemptKind, type WorkflowState } from "../domain/state";
import { InboxRows, type EventReceipt } from "./inbox-rows";
import { applySchemaMigrations, schemaExists } from "./schema";

export type { EventReceipt } from "./inbox-rows";

export interface HistoryEvent {
  seq: number;
  at: number;
  type: string;
  stepId?: string;
  attempt?: number;
  data?: Record<string, unknown>;
}

/** An index write waiting to reach D1. Only the newest entry matters, so there is at most one. */
export interface PendingIndexEntry {
  seq: number;
  entry: IndexEntry;
  attempts: number;
  nextAttemptAt: number;
}

/** The attempt a task message names; the message itself (with its signed token) is made when it is sent. */
export interface QueuedTask {
  stepId: string;
  attempt: number;
  kind: AttemptKind;
}

/** A task message committed with its attempt that the queue has not accepted yet. */
export interface UnsentTask {
  seq: number;
  task: QueuedTask;
  /** Failed sends so far. */
  attempts: number;
  /** When the alarm sends it if nothing else has: the lease of a send under way, or a failed send's backoff. */
  nextAttemptAt: number;
}

/** What one transition writes besides its state and history. */
export interface CommitWrites {
  nextDeadlineAt: number | undefined;
  now: number;
  requestHash?: string;
  indexEntry?: IndexEntry;
  /** Task messages to send, and when the alarm must send them should this instance not get to it. */
  tasks?: { queued: QueuedTask[]; sendBy: number };
  /** The attempt an agent claimed: its message arrived, so an unsent row for it is settled in the same commit. */
  claimed?: Pick<QueuedTask, "stepId" | "attempt">;
  eventReceipt?: EventReceipt;
}

export interface StorageStats {
  sqlCalls: number;
  rowsRead: number;
  rowsWritten: number;
}

/** Bound parameters per statement, kept well under SQLite's limit. */
const SQL_LIST_MAX = 50;

type OutboxRow = { seq: number; payload_json: string; attempts: number; next_attempt_at: number };
type WorkflowRow = { request_hash: string; state_json: string };
type StepRow = { step_id: string; state_json: string };
type EventRow = { seq: number; at: number; type: string; step_id: string | null; attempt: number | null; data_json: string | null };

/**
 * The only module that speaks SQL. A workflow is one row for its own fields plus one row per step, so a
 * transition rewrites only the steps it touched; history is append-only.
 */
export class WorkflowStore {
  /** Serialized steps as last read or written, to find what a transition changed. Never authoritative. */
  private persistedSteps = new Map<string, string>();
  private readonly inboxRows: InboxRows;
  private cached?: { state: WorkflowState; requestHash: string };
  /** Whether the plan has its own row; workflows stored before it had one keep it in `state_json` until rewritten. */
  private planStored = false;
  /** The outbox's index entry as last read or written; `null` once known to be empty. */
  private pendingIndexEntry: PendingIndexEntry | null | undefined;
  /** The outbox's unsent task messages by seq, as last read or written; undefined until first needed. */
  private unsentTaskRows: Map<number, UnsentTask> | undefined;

  /** Storage work done by this instance since it was loaded, for the benchmarks' per-step costs. */
  readonly stats: StorageStats = { sqlCalls: 0, rowsRead: 0, rowsWritten: 0 };

  /** Whether this object has a schema yet; objects only asked about a workflow that does not exist never get one. */
  private hasSchema: boolean;

  constructor(private readonly storage: DurableObjectStorage) {
    this.inboxRows = new InboxRows((statement, ...bindings) => this.query(statement, ...bindings));
    // Synchronous SQL: no request can interleave, so this needs no blockConcurrencyWhile.
    this.hasSchema = schemaExists(storage.sql);
    if (this.hasSchema) applySchemaMigrations(storage.sql);
  }

  /** Every statement goes through here, so the counts cover all of this object's SQL. */
  private query<T extends Record<string, SqlStorageValue>>(statement: string, ...bindings: unknown[]): { toArray(): T[]; one(): T } {
    const cursor = this.storage.sql.exec<T>(statement, ...bindings);
    const rows = cursor.toArray();
    this.stats.sqlCalls += 1;
    this.stats.rowsRead += cursor.rowsRead;
    this.stats.rowsWritten += cursor.rowsWritten;
    return {
      toArray: () => rows,
      one: () => {
        if (rows.length !== 1) throw new Error(`expected exactly one row, got ${rows.length}`);
        return rows[0]!;
      },
    };
  }

  load(): { state: WorkflowState; requestHash: string } | undefined {
    if (this.cached) return this.cached;
    if (!this.hasSchema) return undefined;
    const row = this.query<WorkflowRow>("SELECT request_hash, state_json FROM workflow").toArray()[0];
    if (!row) return undefined;
    const steps = this.query<StepRow>("SELECT step_id, state_json FROM steps ORDER BY position")
      .toArray()
      .map((stepRow) => {
        const step = StoredStepSchema.parse(JSON.parse(stepRow.state_json));
        // Compare later writes against the parsed form, whose key order is the schema's.
        this.persistedSteps.set(stepRow.step_id, JSON.stringify(step));
        return step;
      });
    const fields = JSON.parse(row.state_json) as { plan?: unknown };
    this.planStored = fields.plan === undefined;
    if (this.planStored) fields.plan = JSON.parse(this.query<{ plan_json: string }>("SELECT plan_json FROM plan").one().plan_json);
    // Rows are checked on the way in: a row an older or buggy version wrote fails here, not deep in a transition.
    const parsed = WorkflowFieldsSchema.parse(fields);
    // Only a workflow that was ever sent an event has inbox rows to read.
    const inbox = parsed.nextEventSeq === undefined ? [] : this.inboxRows.load();
    const state: WorkflowState = { ...parsed, steps: withStepKinds(parsed.plan, steps), inbox };
    this.cached = { state, requestHash: row.request_hash };
    return this.cached;
  }

  /** The first answer to the event with this id, if one was sent before. */
  eventReceipt(id: string): EventReceipt["answer"] | undefined {
    return this.hasSchema ? this.inboxRows.receipt(id) : undefined;
  }

  /** Writes a transition's new state and history in one transaction: all of it lands, or none. */
  persist(state: WorkflowState, history: HistoryEntryFields[], writes: CommitWrites): void {
    const sql = this.storage.sql;
    const { nextDeadlineAt, now, indexEntry, tasks, claimed, eventReceipt } = writes;
    const hash = writes.requestHash ?? this.cached?.requestHash ?? "";
    const written = new Map<string, string>();
    let pending: PendingIndexEntry | undefined;
    let unsent: UnsentTask[] = [];
    let settled: number[] = [];
    let inboxSeqs: Set<number> | undefined;
    try {
      this.storage.transactionSync(() => {
        if (!this.hasSchema) applySchemaMigrations(sql);
        this.hasSchema = true;
        const { steps, plan, inbox, ...fields } = state;
        if (!this.planStored) this.query("INSERT OR REPLACE INTO plan (singleton, plan_json) VALUES (1, ?)", JSON.stringify(plan));
        this.query(
          `INSERT INTO workflow (singleton, tenant, id, status, version, request_hash, next_deadline_at, state_json)
           VALUES (1, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (singleton) DO UPDATE SET status = excluded.status, version = excluded.version,
             next_deadline_at = excluded.next_deadline_at, state_json = excluded.state_json`,
          state.tenant, state.id, state.status, state.version, hash, nextDeadlineAt ?? null, JSON.stringify(fields),
        );
        steps.forEach((step, position) => {
          const json = JSON.stringify(step);
          if (this.persistedSteps.get(step.id) === json) return;
          this.query(
            "INSERT INTO steps (step_id, position, state_json) VALUES (?, ?, ?) ON CONFLICT (step_id) DO UPDATE SET state_json = excluded.state_json",
            step.id, position, json,
          );
          written.set(step.id, json);
        });
        inboxSeqs = this.inboxRows.write(inbox ?? []);
        if (eventReceipt) this.inboxRows.insertReceipt(eventReceipt, now);
        this.insertHistory(history, now);
        if (indexEntry) pending = this.insertIndexEntry(indexEntry, now);
        if (tasks) unsent = tasks.queued.map((task) => this.insertTask(task, tasks.sendBy));
        if (claimed) settled = this.deleteClaimedTask(claimed);
      });
    } catch (error) {
      this.forget();
      this.hasSchema = schemaExists(sql);
      throw error;
    }
    for (const [id, json] of written) this.persistedSteps.set(id, json);
    if (inboxSeqs) this.inboxRows.persisted = inboxSeqs;
    this.planStored = true;
    this.cached = { state, requestHash: hash };
    if (pending) this.pendingIndexEntry = pending;
    // Not yet read: the first read finds these rows in storage with the rest.
    for (const task of unsent) this.unsentTaskRows?.set(task.seq, task);
    for (const seq of settled) this.unsentTaskRows?.delete(seq);
  }

  /**
   * A claim proves its attempt's message arrived, however it came: a row still unsent for it (a start's hand-off,
   * or a send the queue accepted but this instance had not marked yet) would only be sent again. Rows this
   * instance knows are matched in memory, so the usual claim, whose row is long gone, runs no statement.
   */
  private deleteClaimedTask({ stepId, attempt }: Pick<QueuedTask, "stepId" | "attempt">): number[] {
    if (!this.unsentTaskRows) {
      this.query(
        "DELETE FROM outbox WHERE kind = 'task' AND json_extract(payload_json, '$.stepId') = ? AND json_extract(payload_json, '$.attempt') = ?",
        stepId, attempt,
      );
      return [];
    }
    const seqs = [...this.unsentTaskRows.values()].filter(({ task }) => task.stepId === stepId && task.attempt === attempt).map(({ seq }) => seq);
    for (const seq of seqs) this.query("DELETE FROM outbox WHERE seq = ?", seq);
    return seqs;
  }

  private insertTask(task: QueuedTask, sendBy: number): UnsentTask {
    const seq = this.query<{ seq: number }>("INSERT INTO outbox (kind, payload_json, next_attempt_at) VALUES ('task', ?, ?) RETURNING seq", JSON.stringify(task), sendBy)
      .one().seq;
    return { seq, task, attempts: 0, nextAttemptAt: sendBy };
  }

  /** Task messages committed but not yet accepted by the queue, oldest first. */
  unsentTasks(): UnsentTask[] {
    if (!this.unsentTaskRows) {
      const rows = this.hasSchema
        ? this.query<OutboxRow>("SELECT seq, payload_json, attempts, next_attempt_at FROM outbox WHERE kind = 'task' ORDER BY seq").toArray()
        : [];
      this.unsentTaskRows = new Map(
        rows.map((row) => [row.seq, { seq: row.seq, task: JSON.parse(row.payload_json) as QueuedTask, attempts: row.attempts, nextAttemptAt: row.next_attempt_at }]),
      );
    }
    return [...this.unsentTaskRows.values()];
  }

  /** The queue accepted these messages. */
  markTasksSent(seqs: number[]): void {
    for (let i = 0; i < seqs.length; i += SQL_LIST_MAX) {
      const chunk = seqs.slice(i, i + SQL_LIST_MAX);
      this.query(`DELETE FROM outbox WHERE seq IN (${chunk.map(() => "?").join(", ")})`, ...chunk);
    }
    for (const seq of seqs) this.unsentTaskRows?.delete(seq);
  }

  /** The send failed: try these again at `nextAttemptAt`. */
  deferTasks(seqs: number[], nextAttemptAt: number): void {
    for (const seq of seqs) {
      const row = this.unsentTaskRows?.get(seq);
      if (!row) continue;
      this.query("UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ? WHERE seq = ?", nextAttemptAt, seq);
      this.unsentTaskRows?.set(seq, { ...row, attempts: row.attempts + 1, nextAttemptAt });
    }
  }

  /** Replaces any older entry: the index only needs the newest. Due at once. */
  private insertIndexEntry(entry: IndexEntry, now: number): PendingIndexEntry {
    this.query("DELETE FROM outbox WHERE kind = 'index'");
    const seq = this.query<{ seq: number }>("INSERT INTO outbox (kind, payload_json, next_attempt_at) VALUES ('index', ?, ?) RETURNING seq", JSON.stringify(entry), now)
      .one().seq;
    return { seq, entry, attempts: 0, nextAttemptAt: now };
  }

  pendingIndex(): PendingIndexEntry | undefined {
    if (this.pendingIndexEntry === undefined) {
      const row = this.hasSchema
        ? this.query<OutboxRow>("SELECT seq, payload_json, attempts, next_attempt_at FROM outbox WHERE kind = 'index' ORDER BY seq DESC LIMIT 1")
            .toArray()[0]
        : undefined;
      this.pendingIndexEntry = row
        ? { seq: row.seq, entry: JSON.parse(row.payload_json) as IndexEntry, attempts: row.attempts, nextAttemptAt: row.next_attempt_at }
        : null;
    }
    return this.pendingIndexEntry ?? undefined;
  }

  /** The entry reached D1. A newer entry queued meanwhile stays. */
  markIndexed(seq: number): void {
    this.query("DELETE FROM outbox WHERE seq = ?", seq);
    if (this.pendingIndexEntry?.seq === seq) this.pendingIndexEntry = null;
  }

  /** The write failed: try again at `nextAttemptAt`, unless a newer entry replaced this one meanwhile. */
  deferIndex(seq: number, nextAttemptAt: number): void {
    const pending = this.pendingIndexEntry;
    if (!pending || pending.seq !== seq) return;
    this.query("UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ? WHERE seq = ?", nextAttemptAt, seq);
    this.pendingIndexEntry = { ...pending, attempts: pending.attempts + 1, nextAttemptAt };
  }

  /** Appends history without a state change, e.g. a rejected stale report. */
  appendHistory(history: HistoryEntryFields[], now: number): void {
    if (this.hasSchema) this.insertHistory(history, now);
  }

  private insertHistory(history: HistoryEntryFields[], now: number): void {
    for (const entry of history) {
      this.query(
        "INSERT INTO events (at, type, step_id, attempt, data_json) VALUES (?, ?, ?, ?, ?)",
        now, entry.type, entry.stepId ?? null, entry.attempt ?? null, entry.data ? JSON.stringify(entry.data) : null,
      );
    }
  }

  history(afterSeq: number, limit: number): HistoryEvent[] {
    if (!this.hasSchema) return [];
    return this.query<EventRow>("SELECT seq, at, type, step_id, attempt, data_json FROM events WHERE seq > ? ORDER BY seq LIMIT ?", afterSeq, limit)
      .toArray()
      .map(historyEventOf);
  }

  /** The newest events of these types, newest first (the diagnosis' recent decisions; not on any hot path). */
  latestEvents(types: readonly string[], limit: number): HistoryEvent[] {
    if (!this.hasSchema || types.length === 0) return [];
    return this.query<EventRow>(
      `SELECT seq, at, type, step_id, attempt, data_json FROM events WHERE type IN (${types.map(() => "?").join(", ")}) ORDER BY seq DESC LIMIT ?`,
      ...types, limit,
    )
      .toArray()
      .map(historyEventOf);
  }

  /** Drops what is held in memory, so the next load reads storage again. */
  forget(): void {
    this.cached = undefined;
    this.planStored = false;
    this.pendingIndexEntry = undefined;
    this.unsentTaskRows = undefined;
    this.persistedSteps.clear();
    this.inboxRows.persisted.clear();
  }
}

function historyEventOf(row: EventRow): HistoryEvent {
  return {
    seq: row.seq,
    at: row.at,
    type: row.type,
    ...(row.step_id === null ? {} : { stepId: row.step_id }),
    ...(row.attempt === null ? {} : { attempt: row.attempt }),
    ...(row.data_json === null ? {} : { data: JSON.parse(row.data_json) as Record<string, unknown> }),
  };
}
