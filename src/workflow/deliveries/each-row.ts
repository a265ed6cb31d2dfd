import { backoffMs } from "../../domain/machine/backoff";
import { SEND_RETRY } from "../delivery-policy";
import type { OutboxKind, OutboxRow, OutboxRows } from "../outbox-rows";
import type { DeliveredFor, Delivery } from "./delivery";
import { InFlight, leasedAttemptAt } from "./in-flight";

/**
 * A delivery of rows that each stand alone (a child's start or close, a notice to a parent): a fresh row goes at
 * once after its commit, one whose delivery failed after its backoff, and the alarm stays a lease on for a row
 * due now, should this instance die before delivering it. One delivery of each row at a time (InFlight).
 */
export abstract class EachRowDelivery implements Delivery {
  private readonly inFlight = new InFlight();

  constructor(
    protected readonly rows: OutboxRows,
    private readonly kind: OutboxKind,
  ) {}

  nextAttemptAt(now: number): number | undefined {
    const times = this.rows.ofKind(this.kind).map((row) => leasedAttemptAt(row.nextAttemptAt, now));
    return times.length === 0 ? undefined : Math.min(...times);
  }

  async deliver(workflow: DeliveredFor): Promise<boolean> {
    const due = this.inFlight.idle(this.rows.ofKind(this.kind)).filter((row) => row.attempts === 0 || row.nextAttemptAt <= Date.now());
    const settled = await this.inFlight.during(due, () => Promise.all(due.map((row) => this.deliverRow(workflow, row))));
    return settled.every(Boolean);
  }

  /** Delivers one row and removes it; false when it failed and waits for its backoff (see `later`). */
  protected abstract deliverRow(workflow: DeliveredFor, row: OutboxRow): Promise<boolean>;

  /** The row stays, for the alarm to deliver after its backoff (or at `at`, when the other side said when). */
  protected later(row: OutboxRow, log: Record<string, unknown>, at?: number): false {
    const nextAttemptAt = at ?? Date.now() + backoffMs(row.attempts, SEND_RETRY);
    console.error(JSON.stringify({ ...log, kind: this.kind, attempts: row.attempts + 1, nextAttemptAt }));
    this.rows.update(row.seq, { attempts: row.attempts + 1, nextAttemptAt });
    return false;
  }
}
