import { SEND_LEASE_MS } from "../delivery-policy";
import type { OutboxRow } from "../outbox-rows";

/**
 * The rows a delivery has on their way: one delivery of each row at a time, so a call that arrives meanwhile (a
 * later commit, the alarm, a call the delivery itself caused) neither repeats it nor waits for it.
 */
export class InFlight {
  private readonly seqs = new Set<number>();

  /** The rows not on their way already. */
  idle(rows: OutboxRow[]): OutboxRow[] {
    return rows.filter((row) => !this.seqs.has(row.seq));
  }

  /** Runs `work` with these rows marked as on their way. */
  async during<T>(rows: OutboxRow[], work: () => Promise<T>): Promise<T> {
    for (const row of rows) this.seqs.add(row.seq);
    try {
      return await work();
    } finally {
      for (const row of rows) this.seqs.delete(row.seq);
    }
  }
}

/** The earliest of these times that is still to come. */
export function earliestAfter(times: number[], now: number): number | undefined {
  const later = times.filter((at) => at > now);
  return later.length === 0 ? undefined : Math.min(...later);
}

/**
 * When the alarm must come for a row delivered now or later: one due now is delivered by the call that follows,
 * and the alarm stays a lease on, should that delivery never be answered (the instance evicted, its call dropped).
 */
export function leasedAttemptAt(nextAttemptAt: number, now: number): number {
  return nextAttemptAt <= now ? now + SEND_LEASE_MS : nextAttemptAt;
}
