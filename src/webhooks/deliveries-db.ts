/** The record of deliveries in D1: the only module that speaks SQL to the `webhook_deliveries` table. */
import { z } from "zod";
import { expectedNextAttemptAt } from "./next-attempt";
import { DELIVERY_STATUSES, type DeliveryView } from "./spec";

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** What the record holds of one (subscription, event) pair, as the consumer needs it before posting again. */
export interface RecordedDelivery {
  status: DeliveryStatus;
  attempts: number;
  firstAt: number;
}

/** One attempt's outcome, written over the pair's earlier attempts. */
export interface DeliveryAttempt {
  webhookId: string;
  eventId: string;
  workflowId: string;
  eventType: string;
  status: DeliveryStatus;
  lastStatus?: number | undefined;
  lastError?: string | undefined;
  at: number;
}

/** D1's limit on bound parameters per statement is 100. */
const BOUND_PARAMETERS_MAX = 100;
export const RECENT_DELIVERIES_MAX = 100;

const RecordedRowSchema = z.object({ webhook_id: z.string(), event_id: z.string(), status: z.enum(DELIVERY_STATUSES), attempts: z.number(), first_at: z.number() });
const ViewRowSchema = z.object({
  event_id: z.string(),
  event_type: z.string(),
  workflow_id: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number(),
  last_status: z.number().nullable(),
  last_error: z.string().nullable(),
  first_at: z.number(),
  last_at: z.number(),
});

export const deliveryKey = (webhookId: string, eventId: string) => `${webhookId}\n${eventId}`;

/** What is recorded of these pairs, by `deliveryKey`. Read through the primary key. */
export async function recordedDeliveries(db: D1Database, tenant: string, webhookIds: string[], eventIds: string[]): Promise<Map<string, RecordedDelivery>> {
  const recorded = new Map<string, RecordedDelivery>();
  if (webhookIds.length === 0 || eventIds.length === 0) return recorded;
  const eventsPerRead = Math.max(1, BOUND_PARAMETERS_MAX - 1 - webhookIds.length);
  for (let i = 0; i < eventIds.length; i += eventsPerRead) {
    const chunk = eventIds.slice(i, i + eventsPerRead);
    const { results } = await db
      .prepare(
        `SELECT webhook_id, event_id, status, attempts, first_at FROM webhook_deliveries
         WHERE tenant = ? AND webhook_id IN (${webhookIds.map(() => "?").join(", ")}) AND event_id IN (${chunk.map(() => "?").join(", ")})`,
      )
      .bind(tenant, ...webhookIds, ...chunk)
      .all();
    for (const row of results) {
      const parsed = RecordedRowSchema.parse(row);
      recorded.set(deliveryKey(parsed.webhook_id, parsed.event_id), { status: parsed.status, attempts: parsed.attempts, firstAt: parsed.first_at });
    }
  }
  return recorded;
}

export async function recordAttempt(db: D1Database, tenant: string, attempt: DeliveryAttempt): Promise<void> {
  await db
    .prepare(
      `INSERT INTO webhook_deliveries (tenant, webhook_id, event_id, workflow_id, event_type, status, attempts, last_status, last_error, first_at, last_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8, ?9, ?9)
       ON CONFLICT (tenant, webhook_id, event_id) DO UPDATE SET status = excluded.status, attempts = attempts + 1,
         last_status = excluded.last_status, last_error = excluded.last_error, last_at = excluded.last_at`,
    )
    .bind(tenant, attempt.webhookId, attempt.eventId, attempt.workflowId, attempt.eventType, attempt.status, attempt.lastStatus ?? null, attempt.lastError ?? null, attempt.at)
    .run();
}

/** The subscription's most recent deliveries, newest first. */
export async function recentDeliveries(db: D1Database, tenant: string, webhookId: string): Promise<DeliveryView[]> {
  const { results } = await db
    .prepare(
      `SELECT event_id, event_type, workflow_id, status, attempts, last_status, last_error, first_at, last_at FROM webhook_deliveries
       WHERE tenant = ? AND webhook_id = ? ORDER BY first_at DESC, rowid DESC LIMIT ?`,
    )
    .bind(tenant, webhookId, RECENT_DELIVERIES_MAX)
    .all();
  return results.map((row) => {
    const parsed = ViewRowSchema.parse(row);
    const nextAttemptAt = expectedNextAttemptAt({ status: parsed.status, attempts: parsed.attempts, lastAt: parsed.last_at });
    return {
      eventId: parsed.event_id,
      type: parsed.event_type,
      workflowId: parsed.workflow_id,
      status: parsed.status,
      attempts: parsed.attempts,
      ...(parsed.last_status === null ? {} : { lastStatus: parsed.last_status }),
      ...(parsed.last_error === null ? {} : { lastError: parsed.last_error }),
      firstAt: parsed.first_at,
      lastAt: parsed.last_at,
      ...(nextAttemptAt === undefined ? {} : { nextAttemptAt }),
    };
  });
}
