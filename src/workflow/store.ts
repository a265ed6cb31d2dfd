import type { HistoryEntryFields } from "../domain/machine/history";
import type { Effect } from "../domain/machine";
import { withStepKinds, WorkflowFieldsSchema, type WorkflowState } from "../domain/machine/state";
import { InboxRows, type EventReceipt } from "./inbox-rows";
import { ItemRowsSql } from "./item-rows";
import type { MapItemRow, PendingItems } from "../domain/machine";
import { OutboxRows } from "./outbox-rows";
import { ExchangeRows } from "./exchange-rows";
import type { StepExchange } from "../domain/exchange/exchange";
import { applySchemaMigrations, schemaExists } from "./schema";
import { StepRows } from "./step-rows";
import { HistoryRows, type HistoryEvent } from "./history-rows";

export type { EventReceipt } from "./inbox-rows";
export type { HistoryEvent } from "./history-rows";

/** What one transition writes besides its state and history. */
export interface CommitWrites {
  nextDeadlineAt: number | undefined;
  now: number;
  /** The transition's effects, written to the outbox; a task's send is leased to this instance until `sendBy`. */
  effects: readonly Effect[];
  sendBy: number;
  /** Whether the webhooks' cursor follows new history (false: the tenant is known to have no subscription). */
  announce: boolean;
  requestHash?: string;
  /** The attempt an agent claimed: its message arrived, so an unsent row for it is settled in the same commit. */
  claimed?: { stepId: string; attempt: number };
  eventReceipt?: EventReceipt;
  /** Map items' rows the transition wrote, and maps it started. */
  items?: { rows: readonly MapItemRow[]; pending: readonly PendingItems[] };
  /** What an attempt sent and got back: kept on its step's row, when this commit writes that row. */
  exchange?: StepExchange;
}

export interface StorageStats {
  sqlCalls: number;
  rowsRead: number;
  rowsWritten: number;
}

type WorkflowRow = { request_hash: string; state_json: string; open_steps_json: string | null };

/**
 * The only module that speaks SQL. A workflow is one row for its own fields, carrying its plan's open steps, plus one
 * row per step that has ended, so a transition rewrites only the rows it touched; history is append-only, one row per
 * commit.
 */
export class WorkflowStore {
  /** The steps' rows, each written when its step ended (see step-rows.ts). */
  private readonly stepRows: StepRows;
  private readonly inboxRows: InboxRows;
  private readonly historyRows: HistoryRows;
  private cached?: { state: WorkflowState; requestHash: string };
  /** Whether the plan has its own row; workflows stored before it had one keep it in `state_json` until rewritten. */
  private planStored = false;
  /** Whether the input is in the plan's row too (it never changes either); older workflows keep it in `state_json`. */
  private inputStored = false;
  /** What commits promised to deliver (see outbox.ts). */
  readonly outbox: OutboxRows;
  /** The rows of the workflow's map items (see item-rows.ts). */
  readonly items: ItemRowsSql;
  /** The attempts' exchanges, on their steps' rows (see exchange-rows.ts). */
  readonly exchanges: ExchangeRows;

  /** Storage work done by this instance since it was loaded, for the benchmarks' per-step costs. */
  readonly stats: StorageStats = { sqlCalls: 0, rowsRead: 0, rowsWritten: 0 };

  /** Whether this object has a schema yet; objects only asked about a workflow that does not exist never get one. */
  private hasSchema: boolean;

  constructor(private readonly storage: DurableObjectStorage) {
    this.inboxRows = new InboxRows((statement, ...bindings) => this.query(statement, ...bindings));
    this.historyRows = new HistoryRows((statement, ...bindings) => this.query(statement, ...bindings));
    this.items = new ItemRowsSql((statement, ...bindings) => this.query(statement, ...bindings));
    this.exchanges = new ExchangeRows((statement, ...bindings) => this.query(statement, ...bindings));
    this.stepRows = new StepRows((statement, ...bindings) => this.query(statement, ...bindings), this.exchanges);
    this.outbox = new OutboxRows((statement, ...bindings) => this.query(statement, ...bindings), () => this.hasSchema);
    // Synchronous SQL: no request can interleave, so this needs no blockConcurrencyWhile.
    this.hasSchema = schemaExists(storage.sql);
    if (this.hasSchema) this.stats.rowsWritten += applySchemaMigrations(storage.sql, true);
  }

  /** Every statement goes through here, so the counts cover all of this object's SQL. */
  private query<T extends Record<string, SqlStorageValue>>(statement: string, ...bindings: unknown[]): QueryRows<T> {
    const cursor = this.storage.sql.exec<T>(statement, ...bindings);
    const rows = cursor.toArray();
    this.stats.sqlCalls += 1;
    this.stats.rowsRead += cursor.rowsRead;
    this.stats.rowsWritten += cursor.rowsWritten;
    return new QueryRows(rows);
  }

  load(): { state: WorkflowState; requestHash: string } | undefined {
    if (this.cached) return this.cached;
    if (!this.hasSchema) return undefined;
    const row = this.query<WorkflowRow>("SELECT request_hash, state_json, open_steps_json FROM workflow").toArray()[0];
    if (!row) return undefined;
    const fields = JSON.parse(row.state_json) as { plan?: unknown; input?: unknown };
    this.planStored = fields.plan === undefined;
    if (this.planStored) {
      const once = this.query<{ plan_json: string; input_json: string | null }>("SELECT plan_json, input_json FROM plan").one();
      fields.plan = JSON.parse(once.plan_json);
      // Workflows stored before the input had its place here keep it in their own row.
      this.inputStored = once.input_json !== null;
      if (this.inputStored) fields.input = JSON.parse(once.input_json!);
    }
    // Rows are checked on the way in: a row an older or buggy version wrote fails here, not deep in a transition.
    const parsed = WorkflowFieldsSchema.parse(fields);
    // Only a workflow that was ever sent an event has inbox rows to read.
    const inbox = parsed.nextEventSeq === undefined ? [] : this.inboxRows.load();
    const state: WorkflowState = { ...parsed, steps: withStepKinds(parsed.plan, this.stepRows.load(parsed.plan, row.open_steps_json)), inbox };
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
    const { nextDeadlineAt, now, claimed, eventReceipt } = writes;
    const hash = writes.requestHash ?? this.cached?.requestHash ?? "";
    let written = new Map<string, string>();
    let inboxSeqs: Set<number> | undefined;
    try {
      this.storage.transactionSync(() => {
        if (!this.hasSchema) this.stats.rowsWritten += applySchemaMigrations(sql);
        this.hasSchema = true;
        const { steps, plan, inbox, input, ...rest } = state;
        if (!this.planStored) this.query("INSERT OR REPLACE INTO plan (singleton, plan_json, input_json) VALUES (1, ?, ?)", JSON.stringify(plan), JSON.stringify(input));
        const fields = this.planStored && !this.inputStored ? { ...rest, input } : rest;
        // The steps first: the plan's changed open steps ride on the workflow's row (step-rows.ts).
        const stepWrites = this.stepRows.write(steps, plan, writes.exchange);
        written = stepWrites.written;
        this.query(
          `INSERT INTO workflow (singleton, tenant, id, status, version, request_hash, next_deadline_at, state_json, open_steps_json)
           VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (singleton) DO UPDATE SET status = excluded.status, version = excluded.version,
             next_deadline_at = excluded.next_deadline_at, state_json = excluded.state_json, open_steps_json = excluded.open_steps_json`,
          state.tenant, state.id, state.status, state.version, hash, nextDeadlineAt ?? null, JSON.stringify(fields), stepWrites.openStepsJson,
        );
        if (writes.items) this.items.write(writes.items.pending, writes.items.rows);
        inboxSeqs = this.inboxRows.write(inbox ?? []);
        if (eventReceipt) this.inboxRows.insertReceipt(eventReceipt, now);
        this.historyRows.append(history, now);
        this.writeEffects(writes);
        if (claimed) this.outbox.removeClaimedTask(claimed.stepId, claimed.attempt);
      });
    } catch (error) {
      this.forget();
      this.hasSchema = schemaExists(sql);
      throw error;
    }
    this.stepRows.committed(written);
    if (inboxSeqs) this.inboxRows.persisted = inboxSeqs;
    if (!this.planStored) this.inputStored = true;
    this.planStored = true;
    this.cached = { state, requestHash: hash };
  }

  /** Appends history and its effects without a state change, e.g. a rejected stale report. */
  appendHistory(history: HistoryEntryFields[], writes: Pick<CommitWrites, "now" | "sendBy" | "effects" | "announce">): void {
    if (!this.hasSchema || (history.length === 0 && writes.effects.length === 0)) return;
    this.storage.transactionSync(() => {
      this.historyRows.append(history, writes.now);
      this.writeEffects(writes);
    });
  }

  /** The outbox rows of a commit's effects, in its transaction. */
  private writeEffects({ effects, now, sendBy, announce }: Pick<CommitWrites, "now" | "sendBy" | "effects" | "announce">): void {
    for (const effect of effects) {
      if (effect.type !== "AnnounceHistory") this.outbox.write(effect, { now, sendBy });
      // A fresh cursor row is sent by the delivery that follows; should this instance die first, the alarm a lease on.
      else if (announce) this.outbox.announce(effect.appended, sendBy);
    }
  }

  /** Whether any history follows `seq`. */
  hasHistoryAfter(seq: number): boolean {
    return this.hasSchema && this.historyRows.hasAfter(seq);
  }

  history(afterSeq: number, limit: number): HistoryEvent[] {
    return this.hasSchema ? this.historyRows.page(afterSeq, limit) : [];
  }

  /** The newest events of these types, newest first (the diagnosis' recent decisions; not on any hot path). */
  latestEvents(types: readonly string[], limit: number): HistoryEvent[] {
    return this.hasSchema ? this.historyRows.latest(types, limit) : [];
  }

  /** Drops what is held in memory, so the next load reads storage again. */
  forget(): void {
    this.cached = undefined;
    this.planStored = false;
    this.inputStored = false;
    this.outbox.forget();
    this.stepRows.forget();
    this.inboxRows.persisted.clear();
  }
}

/**
 * A statement's rows, read at once so the counts are complete. A class, not an object of arrow functions: a commit
 * runs about ten statements, and the bundle names each arrow function as it is made (keepNames).
 */
class QueryRows<T> {
  constructor(private readonly rows: T[]) {}

  toArray(): T[] {
    return this.rows;
  }

  one(): T {
    if (this.rows.length !== 1) throw new Error(`expected exactly one row, got ${this.rows.length}`);
    return this.rows[0]!;
  }
}
