import type { HistoryEntryFields } from "../domain/machine/history";

export interface HistoryEvent {
  seq: number;
  at: number;
  type: string;
  stepId?: string;
  attempt?: number;
  data?: Record<string, unknown>;
}

type Query = <T extends Record<string, SqlStorageValue>>(statement: string, ...bindings: unknown[]) => { toArray(): T[] };
type EventRow = { seq: number; at: number; event_json: string };
type StoredEvent = Omit<HistoryEvent, "seq" | "at">;

/**
 * Characters of events one row holds at most. A commit of thousands of events (a large map's start) spans several
 * rows, each far under the runtime's limit on a row; an event longer than this alone still takes one row.
 */
const ROW_MAX_CHARS = 100_000;

/** The events of `rows` (history's rows, or some of them) one row each, numbered by their place in their row. */
const eventsOf = (rows: string) => `SELECT rows.first_seq + each.key AS seq, rows.at AS at, each.value AS event_json FROM ${rows} AS rows, json_each(rows.events_json) AS each`;

/**
 * A workflow's history, one row per commit holding all the events it appended (SQLite bills every row written; a
 * step's commit appends about three). An event's `seq` is its place in the whole history: a row is keyed by the
 * seq of its last event (the rowid: no index to write), and its events are numbered from `first_seq`. History is
 * append-only, so a seq is never reused.
 */
export class HistoryRows {
  constructor(private readonly query: Query) {}

  /** Appends a commit's events, numbered after the last one (in the commit's transaction). */
  append(entries: readonly HistoryEntryFields[], now: number): void {
    for (const events of rowsOf(entries.map(storedEventOf))) {
      // The numbering is read in the same statement, so a transaction rolled back leaves nothing to forget.
      this.query(
        `INSERT INTO history (last_seq, first_seq, at, events_json)
         SELECT last + ?, last + 1, ?, ? FROM (SELECT COALESCE(MAX(last_seq), 0) AS last FROM history)`,
        events.length, now, `[${events.join(",")}]`,
      );
    }
  }

  /** Whether any event follows `seq`. */
  hasAfter(seq: number): boolean {
    return this.query("SELECT 1 FROM history WHERE last_seq > ? LIMIT 1", seq).toArray().length > 0;
  }

  /** Up to `limit` events after `afterSeq`, oldest first. */
  page(afterSeq: number, limit: number): HistoryEvent[] {
    // Each row past `afterSeq` holds at least one event past it, so `limit` rows hold the page: only they are expanded.
    const rows = "(SELECT first_seq, at, events_json FROM history WHERE last_seq > ?1 ORDER BY last_seq LIMIT ?2)";
    return this.query<EventRow>(`${eventsOf(rows)} WHERE rows.first_seq + each.key > ?1 ORDER BY seq LIMIT ?2`, afterSeq, limit)
      .toArray()
      .map(historyEventOf);
  }

  /** The newest events of these types, newest first (the diagnosis' recent decisions; not on any hot path). */
  latest(types: readonly string[], limit: number): HistoryEvent[] {
    if (types.length === 0) return [];
    return this.query<EventRow>(`${eventsOf("history")} WHERE json_extract(each.value, '$.type') IN (${types.map(() => "?").join(", ")}) ORDER BY seq DESC LIMIT ?`, ...types, limit)
      .toArray()
      .map(historyEventOf);
  }
}

/** The SQL of the last event's seq, for a statement that counts back from it (the webhooks' cursor). */
export const LAST_SEQ_SQL = "(SELECT COALESCE(MAX(last_seq), 0) FROM history)";

/** An event as its row keeps it: JSON leaves out the fields it does not have. */
function storedEventOf({ type, stepId, attempt, data }: HistoryEntryFields): string {
  return JSON.stringify({ type, stepId, attempt, data } satisfies StoredEvent);
}

/** The events in rows of at most ROW_MAX_CHARS each, in order. */
function rowsOf(events: readonly string[]): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let chars = 0;
  for (const event of events) {
    if (row.length > 0 && chars + event.length > ROW_MAX_CHARS) {
      rows.push(row);
      row = [];
      chars = 0;
    }
    row.push(event);
    chars += event.length + 1;
  }
  if (row.length > 0) rows.push(row);
  return rows;
}

function historyEventOf(row: EventRow): HistoryEvent {
  // Events moved from an older object's one-row-per-event table carry their empty fields as null.
  const { type, stepId, attempt, data } = JSON.parse(row.event_json) as { [K in keyof StoredEvent]: StoredEvent[K] | null };
  return { seq: row.seq, at: row.at, type: type!, ...(stepId == null ? {} : { stepId }), ...(attempt == null ? {} : { attempt }), ...(data == null ? {} : { data }) };
}
