import { z } from "zod";
import { backoffMs } from "../../domain/machine/backoff";
import type { WebhookReport } from "../../webhooks/message";
import { cachedHasWebhooks, tenantHasWebhooks } from "../../webhooks/subscription-cache";
import { SEND_LEASE_MS, SEND_RETRY } from "../delivery-policy";
import type { OutboxRow, OutboxRows } from "../outbox-rows";
import type { DeliveredFor, Delivery } from "./delivery";
import { leasedAttemptAt } from "./in-flight";

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

/** Whether any history follows `seq`: the store's answer, so this module runs no SQL of its own. */
type HistoryAfter = (seq: number) => boolean;

/**
 * The workflow's durable promise to announce its history to the tenant's webhooks: one outbox row at most,
 * holding the cursor, and one queue message in flight at a time, so each subscription gets the events in order.
 * A tenant known to have no subscription costs a map lookup per commit: no row, no read, no write.
 */
export class WebhookDelivery implements Delivery {
  /** The workflow as the last commit named it, so the alarm's delivery need not load the state again. */
  private workflow: Pick<DeliveredFor, "tenant" | "id" | "name"> | undefined;

  constructor(
    private readonly rows: OutboxRows,
    private readonly env: Env,
    private readonly historyAfter: HistoryAfter,
    private readonly stored: () => Pick<DeliveredFor, "tenant" | "id" | "name"> | undefined,
  ) {}

  /** Whether a commit's new history must move the cursor: not when the tenant is known to have no subscription. */
  follows(tenant: string, now: number): boolean {
    return cachedHasWebhooks(tenant, now) !== false;
  }

  /** When the alarm must send next; undefined when nothing waits. */
  nextAttemptAt(now: number): number | undefined {
    const row = this.current();
    if (!row) return undefined;
    return leasedAttemptAt(row.nextAttemptAt, now);
  }

  /**
   * Sends the message the row is due for. False when the row's time moved (leased to a consumer, or backing off
   * after a refused send), so the caller must set the alarm again.
   */
  async deliver(workflow?: DeliveredFor): Promise<boolean> {
    if (workflow) this.workflow = { tenant: workflow.tenant, id: workflow.id, name: workflow.name };
    const announced = this.announced();
    if (!announced) return true;
    const due = this.current();
    if (!due || !isDue(due, Date.now())) return true;
    const { tenant, id: workflowId, name: workflowName } = announced;
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
    if (!this.historyAfter(report.throughSeq)) {
      this.remove(row);
      return "settled";
    }
    // A fresh row again: the next delivery sends it at once, and its send lease covers a crash before that.
    this.write(row, { afterSeq: report.throughSeq, inFlight: false, attempts: 0, nextAttemptAt: now + SEND_LEASE_MS });
    return "send";
  }

  private announced(): Pick<DeliveredFor, "tenant" | "id" | "name"> | undefined {
    return this.workflow ?? this.stored();
  }

  private current(): CursorRow | null {
    const row = this.rows.ofKind("webhooks")[0];
    return row ? toCursor(row) : null;
  }

  private write(row: CursorRow, changes: Partial<Omit<CursorRow, "seq">>): void {
    const next = { ...row, ...changes };
    this.rows.update(row.seq, { payload: { afterSeq: next.afterSeq, inFlight: next.inFlight }, attempts: next.attempts, nextAttemptAt: next.nextAttemptAt });
  }

  private remove(row: CursorRow): void {
    this.rows.remove([row.seq]);
  }
}

/** A fresh row (never sent, never failed) goes at once; any other waits for its time. */
function isDue(row: CursorRow, now: number): boolean {
  return row.nextAttemptAt <= now || (!row.inFlight && row.attempts === 0);
}

function toCursor(row: OutboxRow): CursorRow {
  const payload = PayloadSchema.parse(row.payload);
  return { seq: row.seq, ...payload, attempts: row.attempts, nextAttemptAt: row.nextAttemptAt };
}
