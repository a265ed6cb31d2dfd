import { InboxEventSchema, type InboxEvent } from "../domain/machine/state";

/** The first answer to an event sent with an id: what a repeat of it is told. */
export interface EventReceipt {
  id: string;
  answer: { ok: true; consumed: boolean };
}

type Query = <T extends Record<string, SqlStorageValue>>(statement: string, ...bindings: unknown[]) => { toArray(): T[] };

/**
 * The inbox's rows and the event receipts, for the store: statements run through its `query` (so they are
 * counted) and inside its transaction. Inbox events are never changed, only added and consumed: rows are
 * inserted and deleted, never rewritten.
 */
export class InboxRows {
  /** Seqs of the inbox rows as last read or written. */
  persisted = new Set<number>();

  constructor(private readonly query: Query) {}

  load(): InboxEvent[] {
    return this.query<{ seq: number; event_json: string }>("SELECT seq, event_json FROM inbox ORDER BY seq")
      .toArray()
      .map((row) => {
        this.persisted.add(row.seq);
        return InboxEventSchema.parse(JSON.parse(row.event_json));
      });
  }

  /** Brings the rows in line with `inbox`; returns the seqs now stored, to note once the transaction commits. */
  write(inbox: InboxEvent[]): Set<number> {
    const seqs = new Set(inbox.map((entry) => entry.seq));
    for (const seq of this.persisted) if (!seqs.has(seq)) this.query("DELETE FROM inbox WHERE seq = ?", seq);
    for (const entry of inbox) {
      if (!this.persisted.has(entry.seq)) this.query("INSERT INTO inbox (seq, event_json) VALUES (?, ?)", entry.seq, JSON.stringify(entry));
    }
    return seqs;
  }

  receipt(id: string): EventReceipt["answer"] | undefined {
    const row = this.query<{ answer_json: string }>("SELECT answer_json FROM event_receipts WHERE id = ?", id).toArray()[0];
    return row ? (JSON.parse(row.answer_json) as EventReceipt["answer"]) : undefined;
  }

  insertReceipt(receipt: EventReceipt, now: number): void {
    this.query("INSERT INTO event_receipts (id, answer_json, at) VALUES (?, ?, ?)", receipt.id, JSON.stringify(receipt.answer), now);
  }
}
