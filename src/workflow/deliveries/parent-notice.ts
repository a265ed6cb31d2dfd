import type { ChildEndNotice } from "../../domain/machine";
import type { OutboxRow, OutboxRows } from "../outbox-rows";
import type { DeliveredFor } from "./delivery";
import { EachRowDelivery } from "./each-row";
import { workflowObject } from "./workflow-stub";

/**
 * A child workflow that ended tells its parent's object, right after the commit that ended it (the row was written
 * in that commit): the parent's step ends with it, and nothing polls. A failed call is tried again with backoff by
 * the alarm, for as long as it takes: the parent hears of its child no other way. The parent applies a notice
 * once (fenced by the child's id), so one delivered twice, or after the parent moved on, changes nothing.
 */
export class ParentNoticeDelivery extends EachRowDelivery {
  constructor(
    rows: OutboxRows,
    private readonly env: Env,
  ) {
    super(rows, "parent-notice");
  }

  protected async deliverRow(workflow: DeliveredFor, row: OutboxRow): Promise<boolean> {
    const notice = row.payload as ChildEndNotice;
    try {
      await workflowObject(this.env, workflow.tenant, notice.parentId).childEnded(notice);
    } catch (error) {
      return this.later(row, { message: "parent not told its child ended; the alarm tries again", workflowId: workflow.id, parentId: notice.parentId, error: String(error) });
    }
    this.rows.remove([row.seq]);
    return true;
  }
}
