import { z } from "zod";
import { backoffMs } from "../../domain/backoff";
import type { WebhookReport } from "../../webhooks/message";
import { cachedHasWebhooks, tenantHasWebhooks } from "../../webhooks/subscription-cache";
import { SEND_LEASE_MS, SEND_RETRY } from "../delivery-policy";
import type { WorkflowStore } from "../store";

/**
 * A message on its way is leased to the consumer for this long. A consumer posts at most a few minutes' worth
 * per message (see DELIVERY_BUDGET_MS); past the lease, the message is taken as lost and the alarm sends another.
 */
export const CONSUMER_LEASE_MS = 5 * 60_000;

const PayloadSchema = z.object({ afterSeq: z.int().min(0), inFlight: z.boolean() });

/** The one `webhooks` row of the outbox: history through `afterSeq` has been delivered to every subscription. */
interface CursorRow {
  seq: number;
  afterSeq: number;
  /** A message for `afterSeq` was sent and its consumer has not reported yet. */
  inFlight: boolean;
  /** Failures in a row. */
  attempts: number;
  /** When the alarm sends (again): the end of a lease, or of a failure's backoff. */
  nextAttemptAt: number;
}

type OutboxRow = { seq: number; payload_json: string; attempts: number; next_attempt_at: number };

/** What a webhook message names of its workflow. */
interface AnnouncedWorkflow {
  tenant: string;
  id: string;
  name: string;
}

/**
 * The workflow's durable promise to announce its history to the tenant's webhooks: one outbox row at most,
 * holding the cursor, and one queue message in flight at a time, so each subscription gets the events in order.
 * A tenant known to have no subscription costs a map lookup per commit: no row, no read, no write.
 */
export class WebhookOutbox {
  /** The row as last read or written; null once known to be absent; undefined until first needed. */
  private row: CursorRow | null | undefined;
  /** The workflow as the last commit named it, so a delivery need not load the state again. */
  private workflow: AnnouncedWorkflow | undefined;

  constructor(
    private readonly sql: SqlStorage,
    private readonly store: WorkflowStore,
    private readonly env: Env,
  ) {}

  /**
   * A commit appended `appended` history events: unless the tenant is known to have no subscription, the row must
   * exist. Called with no await since the persist, so it commits atomically with the state it follows.
   */
  noteAppended(workflow: AnnouncedWorkflow, appended: number, now: number): void {
    this.workflow = { tenant: workflow.tenant, id: workflow.id, name: workflow.name };
    if (appended === 0 || cachedHasWebhooks(workflow.tenant, now) === false || this.row) return;
    // The cursor stops just before this commit's events: without a row, those before were announced (or there was
    // no subscription to announce them to). Inserted only if absent, so a row this instance has not read yet stays.
    const inserted = this.query<OutboxRow>(
      `INSERT INTO outbox (kind, payload_json, next_attempt_at)
       SELECT 'webhooks', json_object('afterSeq', (SELECT COALESCE(MAX(seq), 0) FROM events) - ?, 'inFlight', json('false')), ?
       WHERE NOT EXISTS (SELECT 1 FROM outbox WHERE kind = 'webhooks')
       RETURNING seq, payload_json, attempts, next_attempt_at`,
      appended,
      now + SEND_LEASE_MS,
    )[0];
    this.row = inserted ? toCursor(inserted) : this.read();
  }

  /** When the alarm must send next; undefined when nothing waits. */
  nextAttemptAt(now: number): number | undefined {
    const row = this.row === undefined && this.tenantHasNone(now) ? null : this.current();
    if (!row) return undefined;
    // Due now, it is sent by the delivery that follows; should that instance die first, the alarm sends it a lease on.
    return row.nextAttemptAt <= now ? now + SEND_LEASE_MS : row.nextAttemptAt;
  }

  /**
   * Sends the message the row is due for. False when the row's time moved (leased to a consumer, or backing off
   * after a refused send), so the caller must set the alarm again.
   */
  async deliver(): Promise<boolean> {
    const workflow = this.announced();
    if (!workflow || (this.row === undefined && this.tenantHasNone(Date.now()))) return true;
    const due = this.current();
    if (!due || !isDue(due, Date.now())) return true;
    const { tenant, id: workflowId, name: workflowName } = workflow;
    // A D1 that cannot say is taken as "may have": the consumer reads the subscriptions again anyway.
    const has = await tenantHasWebhooks(this.env.DB, tenant).catch(() => true);
    // Other calls may have run meanwhile: act only on the row as it is now.
    const row = this.current();
    if (!row || row.seq !== due.seq || !isDue(row, Date.now())) return true;
    if (!has) {
      this.remove(row);
      return true;
    }
    const afterSeq = row.afterSeq;
    this.write(row, { inFlight: true, nextAttemptAt: Date.now() + CONSUMER_LEASE_MS });
    try {
      await this.env.WEBHOOKS.send({ tenant, workflowId, workflowName, afterSeq });
    } catch (error) {
      const retryAt = Date.now() + backoffMs(row.attempts, SEND_RETRY);
      console.error(JSON.stringify({ message: "webhook message not sent; the alarm will send it again", workflowId, afterSeq, retryAt, error: String(error) }));
      const current = this.current();
      if (current?.seq === row.seq && current.inFlight) this.write(current, { inFlight: false, attempts: current.attempts + 1, nextAttemptAt: retryAt });
    }
    return false;
  }

  /**
   * The consumer's word on the message sent for `report.afterSeq`. Anything but the report of the message in
   * flight (a repeat, a report from a message whose lease lapsed) is "stale" and changes nothing. "send" when
   * more history waits: the caller delivers at once.
   */
  settle(report: WebhookReport, now: number): "stale" | "settled" | "send" {
    const row = this.current();
    if (!row || !row.inFlight || row.afterSeq !== report.afterSeq || report.throughSeq < row.afterSeq) return "stale";
    if (report.outcome === "none") {
      this.remove(row);
      return "settled";
    }
    if (report.outcome === "failed") {
      this.write(row, { afterSeq: report.throughSeq, inFlight: false, attempts: row.attempts + 1, nextAttemptAt: now + backoffMs(row.attempts, SEND_RETRY) });
      return "settled";
    }
    if (this.query("SELECT 1 FROM events WHERE seq > ? LIMIT 1", report.throughSeq).length === 0) {
      this.remove(row);
      return "settled";
    }
    // A fresh row again: the next delivery sends it at once, and its send lease covers a crash before that.
    this.write(row, { afterSeq: report.throughSeq, inFlight: false, attempts: 0, nextAttemptAt: now + SEND_LEASE_MS });
    return "send";
  }

  private tenantHasNone(now: number): boolean {
    const tenant = this.announced()?.tenant;
    return tenant === undefined || cachedHasWebhooks(tenant, now) === false;
  }

  private announced(): AnnouncedWorkflow | undefined {
    return this.workflow ?? this.store.load()?.state;
  }

  private current(): CursorRow | null {
    if (this.row === undefined) this.row = this.read();
    return this.row;
  }

  private read(): CursorRow | null {
    const row = this.query<OutboxRow>("SELECT seq, payload_json, attempts, next_attempt_at FROM outbox WHERE kind = 'webhooks' ORDER BY seq LIMIT 1")[0];
    return row ? toCursor(row) : null;
  }

  private write(row: CursorRow, changes: Partial<Omit<CursorRow, "seq">>): void {
    const next = { ...row, ...changes };
    this.query(
      "UPDATE outbox SET payload_json = ?, attempts = ?, next_attempt_at = ? WHERE seq = ?",
      JSON.stringify({ afterSeq: next.afterSeq, inFlight: next.inFlight }),
      next.attempts,
      next.nextAttemptAt,
      row.seq,
    );
    this.row = next;
  }

  private remove(row: CursorRow): void {
    this.query("DELETE FROM outbox WHERE seq = ?", row.seq);
    this.row = null;
  }

  /** Counted with the store's own SQL, so the benchmarks' per-step figures include this module's. */
  private query<T extends Record<string, SqlStorageValue>>(statement: string, ...bindings: unknown[]): T[] {
    const cursor = this.sql.exec<T>(statement, ...bindings);
    const rows = cursor.toArray();
    const stats = this.store.stats;
    stats.sqlCalls += 1;
    stats.rowsRead += cursor.rowsRead;
    stats.rowsWritten += cursor.rowsWritten;
    return rows;
  }
}

/** A fresh row (never sent, never failed) goes at once; any other waits for its time. */
function isDue(row: CursorRow, now: number): boolean {
  return row.nextAttemptAt <= now || (!row.inFlight && row.attempts === 0);
}

function toCursor(row: OutboxRow): CursorRow {
  const payload = PayloadSchema.parse(JSON.parse(row.payload_json));
  return { seq: row.seq, ...payload, attempts: row.attempts, nextAttemptAt: row.next_attempt_at };
}
