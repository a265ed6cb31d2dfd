import type { CloseChildWorkflow } from "../../domain/machine";
import type { OutboxRow, OutboxRows } from "../outbox-rows";
import type { DeliveredFor } from "./delivery";
import { EachRowDelivery } from "./each-row";
import { workflowObject } from "./workflow-stub";

type ChildCloseRow = Omit<CloseChildWorkflow, "type">;

/**
 * The parent closed a step whose child was open: the child is cancelled or terminated as the step's
 * `onParentClose` says. Repeating it is harmless (a child that already ended answers a conflict, which settles the
 * row too). A child whose start is still in this outbox (deferred, or made but not recorded) may not exist yet:
 * the close waits for that start, so a child started late is closed all the same.
 */
export class ChildCloseDelivery extends EachRowDelivery {
  constructor(
    rows: OutboxRows,
    private readonly env: Env,
  ) {
    super(rows, "child-close");
  }

  protected async deliverRow(workflow: DeliveredFor, row: OutboxRow): Promise<boolean> {
    const { stepId, childId, action } = row.payload as ChildCloseRow;
    const log = { message: "child workflow not closed yet; the alarm tries again", workflowId: workflow.id, childId, action };
    try {
      const child = workflowObject(this.env, workflow.tenant, childId);
      // The parent acts, not a token: its own history says who ended it, the child's which workflow closed it.
      const by = { actor: `workflow:${workflow.id}`, reason: `its parent workflow "${workflow.id}" closed step "${stepId}"` };
      const reply = await child.command({ command: action, by });
      if (!reply.ok && reply.code === "not_found" && this.startPending(childId)) return this.later(row, { ...log, error: "its start is still to be made" });
    } catch (error) {
      return this.later(row, { ...log, error: String(error) });
    }
    this.rows.remove([row.seq]);
    return true;
  }

  private startPending(childId: string): boolean {
    return this.rows.ofKind("child-start").some((row) => (row.payload as { start: { id: string } }).start.id === childId);
  }
}
