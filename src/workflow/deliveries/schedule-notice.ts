import { backoffMs } from "../../domain/backoff";
import { scheduleObjectName } from "../../schedules/schedule-name";
import { SEND_RETRY } from "../delivery-policy";
import type { OutboxRows } from "../outbox-rows";
import { earliestAfter } from "./tasks";
import type { Delivery } from "./delivery";

interface ScheduleNotice {
  schedule: string;
  workflowId: string;
}

/**
 * A workflow a schedule's fire started tells that schedule when it ends, so a buffered fire starts at once. The
 * notice is an outbox row like any other: a failed call is tried again with backoff, and a schedule told twice
 * finds the workflow already ended (its `workflowEnded` is idempotent).
 */
export class ScheduleNoticeDelivery implements Delivery {
  constructor(
    private readonly rows: OutboxRows,
    private readonly env: Env,
  ) {}

  nextAttemptAt(now: number): number | undefined {
    return earliestAfter(this.rows.ofKind("schedule").map((row) => row.nextAttemptAt), now);
  }

  async deliver(workflow: { tenant: string }): Promise<boolean> {
    const due = this.rows.ofKind("schedule").filter((row) => row.nextAttemptAt <= Date.now());
    const told = await Promise.all(
      due.map(async (row) => {
        const notice = row.payload as ScheduleNotice;
        try {
          // The namespace's own stub, not the schedule client: that one reaches back to the object's class through its types.
          await this.env.SCHEDULES.getByName(scheduleObjectName(workflow.tenant, notice.schedule)).workflowEnded(notice.workflowId);
          this.rows.remove([row.seq]);
          return true;
        } catch (error) {
          console.error(JSON.stringify({ message: "could not tell the schedule its workflow ended; the alarm will", schedule: notice.schedule, workflowId: notice.workflowId, error: String(error) }));
          this.rows.update(row.seq, { attempts: row.attempts + 1, nextAttemptAt: Date.now() + backoffMs(row.attempts, SEND_RETRY) });
          return false;
        }
      }),
    );
    return told.every(Boolean);
  }
}
