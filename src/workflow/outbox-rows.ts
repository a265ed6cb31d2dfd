import type { Effect } from "../domain/machine";
import { LAST_SEQ_SQL } from "./history-rows";

/** What the outbox holds: a row per promise a commit made (see Effect), delivered by outbox.ts. */
export type OutboxKind = "handoff" | "task" | "pool" | "pool-withdraw" | "index" | "webhooks" | "schedule" | "child-start" | "child-close" | "parent-notice" | "end-notice";

export interface OutboxRow {
  seq: number;
  kind: OutboxKind;
  payload: unknown;
  /** Failed deliveries so far. */
  attempts: number;
  /** When the alarm delivers it if nothing else has: a delivery's lease, or a failed one's backoff. */
  nextAttemptAt: number;
}

/** When a commit's rows are due: a task's send is leased to the committing instance until `sendBy`. */
export interface OutboxWriteTimes {
  now: number;
  sendBy: number;
}

type Query = <T extends Record<string, SqlStorageValue>>(statement: string, ...bindings: unknown[]) => { toArray(): T[] };
type Row = { seq: number; kind: OutboxKind; payload_json: string; attempts: number; next_attempt_at: number };

/** Bound parameters per statement, kept well under SQLite's limit. */
const SQL_LIST_MAX = 50;
const COLUMNS = "seq, kind, payload_json, attempts, next_attempt_at";
/** A new row's seq: after the table's largest and after every seq this instance gave (bound as the first parameter). */
const NEXT_SEQ_SQL = "MAX((SELECT COALESCE(MAX(seq), 0) FROM outbox), ?) + 1";

/**
 * The outbox table's rows, for the store: statements run through its `query` (so they are counted) and, when a
 * commit writes them, inside its transaction. Rows are mirrored in memory once read, so a commit that sends
 * what it just wrote reads nothing; never authoritative (`forget` drops the mirror, storage is read again).
 */
export class OutboxRows {
  private mirror: Map<number, OutboxRow> | undefined;
  /**
   * The largest seq this instance has written or read. A delivery deletes its row by seq after an await, so a seq must
   * not come back while one may be in flight: a new row takes the next after both this and the table's largest. Only
   * this instance's deliveries can be in flight, so it need not outlive it (AUTOINCREMENT's sequence row would be a
   * second row written with every effect).
   */
  private lastSeq = 0;

  constructor(
    private readonly query: Query,
    private readonly hasSchema: () => boolean,
  ) {}

  /** The rows of one kind, oldest first. */
  ofKind(kind: OutboxKind): OutboxRow[] {
    return [...this.rows().values()].filter((row) => row.kind === kind);
  }

  /** Writes a commit's effect as its row (in the commit's transaction). An announcement is written by `announce`. */
  write(effect: Exclude<Effect, { type: "AnnounceHistory" }>, times: OutboxWriteTimes): void {
    switch (effect.type) {
      case "EnqueueAttempt":
        if (effect.offer) this.insert("pool", { stepId: effect.stepId, attempt: effect.attempt, kind: effect.kind, offer: effect.offer }, times.sendBy);
        else this.insert("task", { stepId: effect.stepId, attempt: effect.attempt, kind: effect.kind }, times.sendBy);
        return;
      case "WithdrawTask":
        this.insert("pool-withdraw", { stepId: effect.stepId, attempt: effect.attempt, pool: effect.pool }, times.now);
        return;
      case "HandOffAttempt":
        this.insert("handoff", effect.task, times.sendBy);
        return;
      case "WriteIndexEntry":
        // The index only needs the newest entry: it replaces any older one, and is due at once.
        for (const row of this.ofKindIfRead("index")) this.mirror?.delete(row.seq);
        this.query("DELETE FROM outbox WHERE kind = 'index'");
        this.insert("index", effect.entry, times.now);
        return;
      case "NotifySchedule":
        this.insert("schedule", { schedule: effect.schedule, workflowId: effect.workflowId }, times.now);
        return;
      case "StartChildWorkflow":
        this.insert("child-start", { stepId: effect.stepId, attempt: effect.attempt, start: effect.start, depth: effect.depth }, times.now);
        return;
      case "CloseChildWorkflow":
        this.insert("child-close", { stepId: effect.stepId, childId: effect.childId, action: effect.action }, times.now);
        return;
      case "NotifyParent":
        this.insert("parent-notice", effect.notice, times.now);
        return;
      case "PostEndNotice":
        this.insert("end-notice", effect.notice, times.now);
        return;
    }
  }

  /**
   * The webhooks' cursor row, unless there is one: it stops just before this commit's `appended` events (without a
   * row, those before were announced, or there was no subscription to announce them to). Inserted only if absent
   * in storage, so a row this instance has not read yet stays.
   */
  announce(appended: number, due: number): void {
    if (this.mirror && this.ofKind("webhooks").length > 0) return;
    const inserted = this.query<Row>(
      `INSERT INTO outbox (seq, kind, payload_json, next_attempt_at)
       SELECT ${NEXT_SEQ_SQL}, 'webhooks', json_object('afterSeq', ${LAST_SEQ_SQL} - ?, 'inFlight', json('false')), ?
       WHERE NOT EXISTS (SELECT 1 FROM outbox WHERE kind = 'webhooks')
       RETURNING ${COLUMNS}`,
      this.lastSeq, appended, due,
    ).toArray()[0];
    if (!inserted) return;
    this.lastSeq = inserted.seq;
    this.mirror?.set(inserted.seq, rowOf(inserted));
  }

  /** Delivered: gone. */
  remove(seqs: number[]): void {
    for (let i = 0; i < seqs.length; i += SQL_LIST_MAX) {
      const chunk = seqs.slice(i, i + SQL_LIST_MAX);
      this.query(`DELETE FROM outbox WHERE seq IN (${chunk.map(() => "?").join(", ")})`, ...chunk);
    }
    for (const seq of seqs) this.mirror?.delete(seq);
  }

  /** A row's new payload, failure count or time; a row removed meanwhile stays removed. */
  update(seq: number, changes: Partial<Pick<OutboxRow, "payload" | "attempts" | "nextAttemptAt">>): void {
    const row = this.rows().get(seq);
    if (!row) return;
    const next = { ...row, ...changes };
    this.query("UPDATE outbox SET payload_json = ?, attempts = ?, next_attempt_at = ? WHERE seq = ?", JSON.stringify(next.payload), next.attempts, next.nextAttemptAt, seq);
    this.mirror?.set(seq, next);
  }

  /**
   * A claim proves its attempt's message arrived, however it came: a row still unsent for it (the supervisor's
   * hand-off to a host, or a send the queue accepted but this instance had not marked yet) would only be sent
   * again. Rows this instance knows are matched in memory, so the usual claim, whose row is long gone, runs no
   * statement.
   */
  removeClaimedTask(stepId: string, attempt: number): void {
    if (!this.mirror) {
      this.query("DELETE FROM outbox WHERE kind = 'task' AND json_extract(payload_json, '$.stepId') = ? AND json_extract(payload_json, '$.attempt') = ?", stepId, attempt);
      return;
    }
    const claimed = this.ofKind("task").filter(({ payload }) => isTask(payload, stepId, attempt));
    if (claimed.length > 0) this.remove(claimed.map(({ seq }) => seq));
  }

  /** Drops the mirror (a failed transaction, an eviction's reset): the next read takes storage as it is. */
  forget(): void {
    this.mirror = undefined;
  }

  private insert(kind: OutboxKind, payload: unknown, nextAttemptAt: number): void {
    const seq = this.query<{ seq: number }>(`INSERT INTO outbox (seq, kind, payload_json, next_attempt_at) VALUES (${NEXT_SEQ_SQL}, ?, ?, ?) RETURNING seq`, this.lastSeq, kind, JSON.stringify(payload), nextAttemptAt)
      .toArray()[0]!.seq;
    this.lastSeq = seq;
    // Not yet read: the first read finds this row in storage with the rest.
    this.mirror?.set(seq, { seq, kind, payload, attempts: 0, nextAttemptAt });
  }

  private ofKindIfRead(kind: OutboxKind): OutboxRow[] {
    return this.mirror ? this.ofKind(kind) : [];
  }

  private rows(): Map<number, OutboxRow> {
    if (!this.mirror) {
      const rows = this.hasSchema() ? this.query<Row>(`SELECT ${COLUMNS} FROM outbox ORDER BY seq`).toArray() : [];
      this.mirror = new Map(rows.map((row) => [row.seq, rowOf(row)]));
      this.lastSeq = rows.reduce((last, row) => Math.max(last, row.seq), this.lastSeq);
    }
    return this.mirror;
  }
}

function rowOf(row: Row): OutboxRow {
  return { seq: row.seq, kind: row.kind, payload: JSON.parse(row.payload_json) as unknown, attempts: row.attempts, nextAttemptAt: row.next_attempt_at };
}

function isTask(payload: unknown, stepId: string, attempt: number): boolean {
  const task = payload as { stepId?: unknown; attempt?: unknown };
  return task.stepId === stepId && task.attempt === attempt;
}
