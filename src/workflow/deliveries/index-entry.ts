import { backoffMs } from "../../domain/machine/backoff";
import type { IndexEntry } from "../../domain/machine/index-entry";
import { upsertIndexEntry } from "../../workflow-index/d1-index";
import { indexDbFor } from "../../workflow-index/index-shards";
import { SEND_LEASE_MS } from "../delivery-policy";
import type { OutboxRow, OutboxRows } from "../outbox-rows";
import type { Delivery } from "./delivery";
import { leasedAttemptAt } from "./in-flight";

const INDEX_RETRY = { initialMs: 1_000, maxMs: 60_000 };

/**
 * The workflow's entry to the cross-workflow index (D1). A write of the entry already under way is not repeated,
 * unless it has gone a lease unanswered: then the alarm armed for it has come, and it is written again (the
 * upsert takes the same version twice).
 */
export class IndexDelivery implements Delivery {
  /** The write under way: its row, and when it began (one unanswered for a lease counts as lost). */
  private writing: { seq: number; startedAt: number } | undefined;

  constructor(
    private readonly rows: OutboxRows,
    private readonly env: Env,
  ) {}

  /**
   * An entry due now is written by the delivery that follows, but the alarm stays a lease on: should that write
   * never be answered (the instance evicted before D1 answers, its call dropped), the alarm writes the entry,
   * where nothing else would until the sweep.
   */
  nextAttemptAt(now: number): number | undefined {
    const pending = this.pending();
    if (!pending) return undefined;
    return leasedAttemptAt(pending.nextAttemptAt, now);
  }

  async deliver(): Promise<boolean> {
    const pending = this.pending();
    const now = Date.now();
    if (!pending || pending.nextAttemptAt > now || this.underWay(pending.seq, now)) return true;
    const write = { seq: pending.seq, startedAt: now };
    this.writing = write;
    const entry = pending.payload as IndexEntry;
    try {
      await upsertIndexEntry(indexDbFor(this.env, entry.tenant, entry.id), entry);
      // A newer entry queued meanwhile stays.
      this.rows.remove([pending.seq]);
      return true;
    } catch (error) {
      const retryAt = Date.now() + backoffMs(pending.attempts, INDEX_RETRY);
      console.error(JSON.stringify({ message: "index write failed; the alarm will retry", workflowId: entry.id, retryAt, error: String(error) }));
      // Unless a newer entry replaced this one meanwhile.
      if (this.pending()?.seq === pending.seq) this.rows.update(pending.seq, { attempts: pending.attempts + 1, nextAttemptAt: retryAt });
      return false;
    } finally {
      if (this.writing === write) this.writing = undefined;
    }
  }

  /** The newest entry; older ones were replaced in the commits that wrote newer ones. */
  pending(): OutboxRow | undefined {
    return this.rows.ofKind("index").at(-1);
  }

  private underWay(seq: number, now: number): boolean {
    return this.writing?.seq === seq && now - this.writing.startedAt < SEND_LEASE_MS;
  }
}
