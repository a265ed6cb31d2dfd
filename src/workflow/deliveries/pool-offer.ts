import type { AttemptKind } from "../../domain/machine/state";
import type { PoolOffer } from "../../domain/machine/effects";
import { poolFor, taskKey } from "../../pools/pool-stub";
import type { OutboxRow, OutboxRows } from "../outbox-rows";
import type { DeliveredFor } from "./delivery";
import { EachRowDelivery } from "./each-row";

/** A worker task's row: the attempt, and the pool it goes to (and leaves, when it moved). */
export interface PoolOfferRow {
  stepId: string;
  attempt: number;
  kind: AttemptKind;
  offer: PoolOffer;
}

/**
 * Worker tasks to their pools, right after the commit that scheduled or moved them: the pool keeps the task until
 * a worker's poll takes it. An offer is idempotent by attempt, so a row delivered twice is one task; a moved task
 * is withdrawn from the pool it left once the new one has it (should the withdrawal be lost, that pool's claim of
 * it is refused, and it drops the task then). A failed call is tried again with backoff by the alarm.
 */
export class PoolOfferDelivery extends EachRowDelivery {
  constructor(
    rows: OutboxRows,
    private readonly env: Env,
  ) {
    super(rows, "pool");
  }

  protected async deliverRow(workflow: DeliveredFor, row: OutboxRow): Promise<boolean> {
    const { stepId, attempt, offer } = row.payload as PoolOfferRow;
    const { tenant, id } = workflow;
    try {
      await poolFor(this.env, tenant, offer.pool).offer({ tenant, pool: offer.pool, workflowId: id, stepId, attempt, priority: offer.priority, fairnessKey: offer.fairnessKey });
      if (offer.withdrawFrom !== undefined) await poolFor(this.env, tenant, offer.withdrawFrom).withdraw(taskKey(id, stepId, attempt));
    } catch (error) {
      return this.later(row, { message: "worker task not offered to its pool; the alarm tries again", workflowId: id, stepId, pool: offer.pool, error: String(error) });
    }
    this.rows.remove([row.seq]);
    return true;
  }
}
