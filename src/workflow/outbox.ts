import type { WebhookReport } from "../webhooks/message";
import type { OutboxKind } from "./outbox-rows";
import type { WorkflowStore } from "./store";
import type { DeliveredFor, Delivery, OwnObject } from "./deliveries/delivery";
import { ChildCloseDelivery } from "./deliveries/child-close";
import { ChildStartDelivery } from "./deliveries/child-start";
import { EndNoticeDelivery } from "./deliveries/end-notice";
import { HandOffDelivery } from "./deliveries/hand-off";
import { IndexDelivery } from "./deliveries/index-entry";
import { ParentNoticeDelivery } from "./deliveries/parent-notice";
import { PoolOfferDelivery } from "./deliveries/pool-offer";
import { PoolWithdrawDelivery } from "./deliveries/pool-withdraw";
import { ScheduleNoticeDelivery } from "./deliveries/schedule-notice";
import { TaskDelivery } from "./deliveries/tasks";
import { WebhookDelivery } from "./deliveries/webhooks";

export { taskMessage, type QueuedTask } from "./deliveries/tasks";
export type { DeliveredFor, OwnObject } from "./deliveries/delivery";

/**
 * Delivers what commits left in the object's outbox, one `Delivery` per kind of row: task messages to the queue
 * (or straight to an agent host), the index entry to D1, the history's announcement to the webhooks' queue, the
 * schedule's notice, a child workflow's start or close, a child's notice to its parent and the end's notice to the
 * start's `notify` URL. Every row was written in the same transaction as the state it belongs to, so a crash or a
 * failed call loses nothing: the row stays, and the alarm tries again with backoff.
 */
export class Outbox {
  private readonly deliveries: { [K in OutboxKind]: Delivery };
  private readonly webhooks: WebhookDelivery;

  constructor(store: WorkflowStore, env: Env, self: OwnObject) {
    this.webhooks = new WebhookDelivery(store.outbox, env, (seq) => store.hasHistoryAfter(seq), () => store.load()?.state);
    // In this order: a start's first attempts, then the queue's, the index and the announcements after.
    this.deliveries = {
      handoff: new HandOffDelivery(store.outbox, env),
      task: new TaskDelivery(store.outbox, env),
      pool: new PoolOfferDelivery(store.outbox, env),
      // After the offers: a task offered and withdrawn before either was delivered is offered, then withdrawn.
      "pool-withdraw": new PoolWithdrawDelivery(store.outbox, env),
      index: new IndexDelivery(store.outbox, env),
      webhooks: this.webhooks,
      schedule: new ScheduleNoticeDelivery(store.outbox, env),
      // A child's start before its close: a close waits for a start still in the outbox.
      "child-start": new ChildStartDelivery(store.outbox, env, self),
      "child-close": new ChildCloseDelivery(store.outbox, env),
      "parent-notice": new ParentNoticeDelivery(store.outbox, env),
      // Last: it may wait on a receiver outside Shepherd for seconds, and only the alarm delivers it.
      "end-notice": new EndNoticeDelivery(store.outbox, env, self),
    };
  }

  /** When the alarm must deliver something next; undefined when nothing waits. */
  nextAttemptAt(now: number): number | undefined {
    const times = Object.values(this.deliveries).map((delivery) => delivery.nextAttemptAt(now));
    const set = times.filter((at): at is number => at !== undefined);
    return set.length === 0 ? undefined : Math.min(...set);
  }

  /** Delivers what is due; "deferred" when something failed and now waits for the alarm (or moved its time). */
  async deliver(workflow: DeliveredFor): Promise<"delivered" | "deferred"> {
    let delivered = true;
    for (const delivery of Object.values(this.deliveries)) delivered = (await delivery.deliver(workflow)) && delivered;
    return delivered ? "delivered" : "deferred";
  }

  /** Whether a commit's new history moves the webhooks' cursor (see WebhookDelivery.follows). */
  announces(tenant: string, now: number): boolean {
    return this.webhooks.follows(tenant, now);
  }

  /** The webhook consumer's word on the message this object sent (see WebhookDelivery.settle). */
  settleWebhooks(report: WebhookReport, now: number): ReturnType<WebhookDelivery["settle"]> {
    return this.webhooks.settle(report, now);
  }

  /** Sends the webhooks' next message now (after a report said more history waits). */
  async deliverWebhooks(): Promise<boolean> {
    return this.webhooks.deliver();
  }
}
