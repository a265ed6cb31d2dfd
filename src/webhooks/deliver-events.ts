/**
 * The work of one webhook message: the workflow's events after the cursor, posted to each subscription that
 * matches them, in history order, each (subscription, event) pair recorded in D1. A subscription stops at its
 * first failure, so it never gets an event before an earlier one; the others go on, and what they already have
 * is skipped when the message comes again.
 */
import { targetPolicyFor } from "../config";
import type { TargetPolicy } from "../domain/security/target-policy";
import type { HistoryEvent } from "../workflow/store";
import { schedulerFor } from "../workflow/client";
import { deliveryKey, recordAttempt, recordedDeliveries, type DeliveryStatus, type RecordedDelivery } from "./deliveries-db";
import { eventNameOf, matchesAnyFilter } from "./event-names";
import type { WebhookMessage, WebhookReport } from "./message";
import { eventBody, eventIdOf } from "./payload";
import { postEvent } from "./post-event";
import { listSubscriptions, noteReceiverFailing, noteReceiverHealthy, type Subscription } from "./subscriptions-db";

/** Events read per message; each next batch is a message of its own, sent as soon as this one is reported. */
const EVENTS_PER_MESSAGE = 20;
/** No POST starts after this long (a slow receiver takes 10 s a try), so the report comes well within the 5-minute lease. */
const DELIVERY_BUDGET_MS = 2 * 60_000;
/** An event whose delivery, or whose receiver, has failed this long is given up (`failed`); the cursor moves past it. */
export const GIVE_UP_AFTER_MS = 24 * 60 * 60_000;

interface Run {
  env: Env;
  message: WebhookMessage;
  events: HistoryEvent[];
  recorded: Map<string, RecordedDelivery>;
  policy: TargetPolicy;
  stopAt: number;
}

/** How far one subscription got: every matching event through `throughSeq` is delivered or given up. */
type Reach = { throughSeq: number; failed: boolean };

export async function deliverEvents(env: Env, message: WebhookMessage): Promise<WebhookReport> {
  const { tenant, workflowId, afterSeq } = message;
  const events = await schedulerFor(env, tenant, workflowId).history(afterSeq, EVENTS_PER_MESSAGE);
  const last = events.at(-1);
  if (!last) return { afterSeq, throughSeq: afterSeq, outcome: "delivered" };
  const subscriptions = await listSubscriptions(env.DB, tenant);
  if (subscriptions.length === 0) return { afterSeq, throughSeq: last.seq, outcome: "none" };
  const eventIds = events.map((event) => eventIdOf(workflowId, event.seq));
  const recorded = await recordedDeliveries(env.DB, tenant, subscriptions.map((subscription) => subscription.id), eventIds);
  const run: Run = { env, message, events, recorded, policy: targetPolicyFor(env, tenant), stopAt: Date.now() + DELIVERY_BUDGET_MS };
  const reached = await Promise.all(subscriptions.map((subscription) => deliverTo(run, subscription)));
  const throughSeq = Math.min(...reached.map((reach) => reach.throughSeq));
  return { afterSeq, throughSeq, outcome: reached.some((reach) => reach.failed) ? "failed" : "delivered" };
}

async function deliverTo(run: Run, subscription: Subscription): Promise<Reach> {
  const { workflowId } = run.message;
  const receiver = { failingSince: subscription.failingSince };
  for (const event of run.events) {
    const type = eventNameOf(event.type);
    if (!matchesAnyFilter(subscription.events, type)) continue;
    const prior = run.recorded.get(deliveryKey(subscription.id, eventIdOf(workflowId, event.seq)));
    if (prior && prior.status !== "failing") continue;
    // Out of time: what is left goes in the next message, which the object sends as soon as it hears of this one.
    if (Date.now() >= run.stopAt) return { throughSeq: event.seq - 1, failed: false };
    const status = await attempt(run, subscription, receiver, event, prior);
    if (status === "failing") return { throughSeq: event.seq - 1, failed: true };
  }
  return { throughSeq: run.events.at(-1)?.seq ?? run.message.afterSeq, failed: false };
}

/**
 * Posts one event and records how it went. A failure is given up (`failed`) when retrying cannot help (a refused
 * target), or when the event, or its receiver, has been failing for GIVE_UP_AFTER_MS: a receiver that stays down
 * then costs each event one try instead of a day's.
 */
async function attempt(run: Run, subscription: Subscription, receiver: { failingSince: number | undefined }, event: HistoryEvent, prior: RecordedDelivery | undefined): Promise<DeliveryStatus> {
  const { env, message } = run;
  const eventId = eventIdOf(message.workflowId, event.seq);
  const outcome = await postEvent(subscription, eventId, JSON.stringify(eventBody(message.workflowId, message.workflowName, event)), run.policy);
  const at = Date.now();
  if (outcome.ok && receiver.failingSince !== undefined) {
    receiver.failingSince = undefined;
    await noteReceiverHealthy(env.DB, message.tenant, subscription.id);
  } else if (!outcome.ok && !outcome.permanent && receiver.failingSince === undefined) {
    receiver.failingSince = at;
    await noteReceiverFailing(env.DB, message.tenant, subscription.id, at);
  }
  const failingSince = Math.min(prior?.firstAt ?? at, receiver.failingSince ?? at);
  const status = outcome.ok ? "delivered" : outcome.permanent || at - failingSince >= GIVE_UP_AFTER_MS ? "failed" : "failing";
  if (status === "failed") console.error(JSON.stringify({ message: "webhook delivery given up", tenant: message.tenant, webhookId: subscription.id, eventId, error: outcome.ok ? undefined : outcome.error }));
  const { status: lastStatus } = outcome;
  const lastError = outcome.ok ? undefined : outcome.error;
  await recordAttempt(env.DB, message.tenant, { webhookId: subscription.id, eventId, workflowId: message.workflowId, eventType: eventNameOf(event.type), status, lastStatus, lastError, at });
  return status;
}
