import { z } from "zod";
import { ConfigError, targetPolicyFor } from "../../config";
import { WORKFLOW_STATUSES } from "../../domain/contract";
import type { EndNoticeEvent } from "../../domain/machine";
import { backoffMs } from "../../domain/machine/backoff";
import { postEvent, type PostOutcome } from "../../webhooks/post-event";
import { NOTICE_RETRY, NOTICE_TRIES } from "../delivery-policy";
import type { OutboxRow, OutboxRows } from "../outbox-rows";
import type { DeliveredFor, Delivery, OwnObject } from "./delivery";
import { InFlight, leasedAttemptAt } from "./in-flight";

/** The row as the commit that ended the workflow wrote it (domain/machine/end-notice.ts). */
const NoticeRowSchema = z.object({
  id: z.string(),
  url: z.string(),
  secret: z.string().optional(),
  status: z.enum(WORKFLOW_STATUSES),
  endedAt: z.number(),
  view: z.looseObject({ id: z.string() }),
});

type NoticeRow = z.infer<typeof NoticeRowSchema>;

/**
 * The end's notice to the start's `notify` URL: the final view, POSTed and signed as webhooks are (Standard Webhooks,
 * `webhook-id` the notice's id), by the object's alarm only, so no call that ends a workflow waits on the receiver.
 * A 2xx delivers it; any other answer, a network error or no answer within 10 s is tried again with backoff, up to
 * NOTICE_TRIES; a URL the tenant's targets no longer allow is given up at once. Either outcome is recorded in the
 * history. At least once: an instance that dies after the receiver's 2xx and before the row is gone posts it again,
 * with the same `webhook-id`.
 */
export class EndNoticeDelivery implements Delivery {
  private readonly inFlight = new InFlight();

  constructor(
    private readonly rows: OutboxRows,
    private readonly env: Env,
    private readonly own: OwnObject,
  ) {}

  /**
   * A notice that is due is due now, not a lease on: the alarm is what posts it, so the alarm must come at once. One
   * on its way holds a lease, should this instance die before the receiver answers.
   */
  nextAttemptAt(now: number): number | undefined {
    const rows = this.rows.ofKind("end-notice");
    const idle = new Set(this.inFlight.idle(rows));
    const times = rows.map((row) => (idle.has(row) ? row.nextAttemptAt : leasedAttemptAt(row.nextAttemptAt, now)));
    return times.length === 0 ? undefined : Math.min(...times);
  }

  async deliver(workflow: DeliveredFor): Promise<boolean> {
    if (!workflow.byAlarm) return true;
    const due = this.inFlight.idle(this.rows.ofKind("end-notice")).filter((row) => row.nextAttemptAt <= Date.now());
    const settled = await this.inFlight.during(due, () => Promise.all(due.map((row) => this.post(workflow.tenant, row))));
    return settled.every(Boolean);
  }

  /** Posts one notice; false when it failed and waits for its backoff. */
  private async post(tenant: string, row: OutboxRow): Promise<boolean> {
    const notice = NoticeRowSchema.parse(row.payload);
    const outcome = await send(this.env, tenant, notice);
    const attempts = row.attempts + 1;
    const about = { noticeId: notice.id, status: notice.status, attempts };
    if (outcome.ok) return this.settle(row, { type: "EndNoticeDelivered", ...about, httpStatus: outcome.status });
    if (outcome.permanent || attempts >= NOTICE_TRIES) {
      return this.settle(row, { type: "EndNoticeFailed", ...about, error: outcome.error, ...(outcome.status === undefined ? {} : { httpStatus: outcome.status }) });
    }
    const nextAttemptAt = Date.now() + backoffMs(row.attempts, NOTICE_RETRY);
    console.error(JSON.stringify({ message: "end notice not delivered; the alarm tries again", workflowId: notice.view.id, ...about, nextAttemptAt, error: outcome.error }));
    this.rows.update(row.seq, { attempts, nextAttemptAt });
    return false;
  }

  /** The row goes and the outcome is recorded in one write: nothing is awaited between the two. */
  private async settle(row: OutboxRow, event: EndNoticeEvent): Promise<true> {
    this.rows.remove([row.seq]);
    await this.own.record(event);
    return true;
  }
}

/** The notice as a Standard Webhooks message: `{type: "workflow.<status>", timestamp, data: <the final view>}`. */
async function send(env: Env, tenant: string, notice: NoticeRow): Promise<PostOutcome> {
  let policy;
  try {
    policy = targetPolicyFor(env, tenant);
  } catch (error) {
    // A malformed ALLOWED_TARGETS refuses everything until it is fixed: tried again, not given up.
    if (error instanceof ConfigError) return { ok: false, error: `ALLOWED_TARGETS: ${error.message}`, permanent: false };
    throw error;
  }
  const body = JSON.stringify({ type: `workflow.${notice.status}`, timestamp: new Date(notice.endedAt).toISOString(), data: notice.view });
  return postEvent(notice, notice.id, body, policy);
}
