import { poolFor, taskKey } from "../../pools/pool-stub";
import type { OutboxRow, OutboxRows } from "../outbox-rows";
import type { DeliveredFor } from "./delivery";
import { EachRowDelivery } from "./each-row";

/** A worker task to take back from its pool: the attempt, and the pool that holds it. */
export interface PoolWithdrawRow {
  stepId: string;
  attempt: number;
  pool: string;
}

/**
 * Worker tasks whose attempts ended unclaimed, taken back from their pools right after the commit, so a pool counts
 * only live tasks as pending. Idempotent (withdrawing what a pool no longer holds does nothing); a failed call is
 * tried again with backoff by the alarm.
 */
export class PoolWithdrawDelivery extends EachRowDelivery {
  constructor(
    rows: OutboxRows,
    private readonly env: Env,
  ) {
    super(rows, "pool-withdraw");
  }

  protected async deliverRow(workflow: DeliveredFor, row: OutboxRow): Promise<boolean> {
    const { stepId, attempt, pool } = row.payload as PoolWithdrawRow;
    try {
      await poolFor(this.env, workflow.tenant, pool).withdraw(taskKey(workflow.id, stepId, attempt));
    } catch (error) {
      return this.later(row, { message: "worker task not withdrawn from its pool; the alarm tries again", workflowId: workflow.id, stepId, pool, error: String(error) });
    }
    this.rows.remove([row.seq]);
    return true;
  }
}
