import { backoffMs } from "../../domain/machine/backoff";
import { scheduleObjectName } from "../../cron/schedule-name";
import { SEND_RETRY } from "../delivery-policy";
import type { OutboxRow, OutboxRows } from "../outbox-rows";
import { earliestAfter, InFlight } from "./in-flight";
import type { Delivery } from "./delivery";

interface ScheduleNotice {
  schedule: string;
  workflowId: string;
}

/** Past this many failed tries (about an hour of backoff), the schedule finds the workflow ended at its next fire. */
const NOTICE_TRIES = 60;

/**
 * A workflow a schedule's fire started tells that schedule when it ends, so a buffered fire starts at once. The
 * notice is an outbox row like any other: a failed call is tried again with backoff, and a schedule told twice
 * finds the workflow already ended (its `workflowEnded` is idempotent).
 */
export class ScheduleNoticeDelivery implements Delivery {
  /**
   * Notices on their way. The schedule may answer by calling this workflow (a `cancel_previous` fire cancels it,
   * and hears of its end inside that call): that call's commit must not send the notice again, or each would
   * call the other for ever.
   */
  private readonly inFlight = new InFlight();

  constructor(
    private readonly rows: OutboxRows,
    private readonly env: Env,
  ) {}

  nextAttemptAt(now: number): number | undefined {
    return earliestAfter(this.rows.ofKind("schedule").map((row) => row.nextAttemptAt), now);
  }

  async deliver(workflow: { tenant: string }): Promise<boolean> {
    const due = this.inFlight.idle(this.rows.ofKind("schedule")).filter((row) => row.nextAttemptAt <= Date.now());
    const told = await this.inFlight.during(due, () => Promise.all(due.map((row) => this.tell(workflow.tenant, row))));
    return told.every(Boolean);
  }

  private async tell(tenant: string, row: OutboxRow): Promise<boolean> {
    const notice = row.payload as ScheduleNotice;
    try {
      // The namespace's own stub, not the schedule client: that one reaches back to the object's class through its types.
      await this.env.SCHEDULES.getByName(scheduleObjectName(tenant, notice.schedule)).workflowEnded(notice.workflowId);
      this.rows.remove([row.seq]);
      return true;
    } catch (error) {
      const givenUp = row.attempts + 1 >= NOTICE_TRIES;
      console.error(JSON.stringify({ message: givenUp ? "schedule not told its workflow ended; its next fire finds out" : "could not tell the schedule its workflow ended; the alarm will", schedule: notice.schedule, workflowId: notice.workflowId, error: String(error) }));
      if (givenUp) this.rows.remove([row.seq]);
      else this.rows.update(row.seq, { attempts: row.attempts + 1, nextAttemptAt: Date.now() + backoffMs(row.attempts, SEND_RETRY) });
      return givenUp;
    }
  }
}
