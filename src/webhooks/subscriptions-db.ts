/** The tenant's webhook subscriptions in D1: the only module that speaks SQL to the `webhooks` table. */
import { z } from "zod";
import { WEBHOOKS_PER_TENANT, type WebhookSpec, type WebhookView } from "./spec";

/** A subscription with its secret, as the consumer signs with it, and since when its receiver has been failing. */
export type Subscription = WebhookView & { secret: string; failingSince?: number };

const RowSchema = z.object({
  id: z.string(),
  url: z.string(),
  events_json: z.string(),
  secret: z.string(),
  failing_since: z.number().nullable(),
  created_at: z.number(),
  updated_at: z.number(),
});

const COLUMNS = "id, url, events_json, secret, failing_since, created_at, updated_at";

function toSubscription(row: unknown): Subscription {
  const { id, url, events_json, secret, failing_since, created_at, updated_at } = RowSchema.parse(row);
  const events = z.array(z.string()).parse(JSON.parse(events_json));
  return { id, url, events, secret, ...(failing_since === null ? {} : { failingSince: failing_since }), createdAt: created_at, updatedAt: updated_at };
}

/** What the API shows: no secret, no delivery state. */
export function viewOf({ id, url, events, createdAt, updatedAt }: Subscription): WebhookView {
  return { id, url, events, createdAt, updatedAt };
}

/** Every subscription of the tenant, by id (there are at most WEBHOOKS_PER_TENANT). */
export async function listSubscriptions(db: D1Database, tenant: string): Promise<Subscription[]> {
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM webhooks WHERE tenant = ? ORDER BY id`).bind(tenant).all();
  return results.map(toSubscription);
}

export async function findSubscription(db: D1Database, tenant: string, id: string): Promise<Subscription | undefined> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM webhooks WHERE tenant = ? AND id = ?`).bind(tenant, id).first();
  return row ? toSubscription(row) : undefined;
}

/** Whether the tenant has any subscription: one read by the primary key. */
export async function hasSubscriptions(db: D1Database, tenant: string): Promise<boolean> {
  return (await db.prepare("SELECT 1 AS found FROM webhooks WHERE tenant = ? LIMIT 1").bind(tenant).first()) !== null;
}

export type SaveResult =
  | { ok: true; created: boolean; subscription: Subscription }
  | { ok: false; code: "limit_reached" };

/**
 * Creates or replaces the subscription `id`. A new one without a secret in `spec` gets `newSecret`; a replaced
 * one keeps its own unless `spec` gives another. At most WEBHOOKS_PER_TENANT per tenant: the count is taken in
 * the INSERT itself. Two creates of the same id race harmlessly: the loser replaces what the winner stored.
 */
export async function saveSubscription(db: D1Database, tenant: string, id: string, spec: WebhookSpec, newSecret: string, now: number): Promise<SaveResult> {
  const events = JSON.stringify(spec.events);
  const inserted = await db
    .prepare(
      `INSERT INTO webhooks (tenant, id, url, events_json, secret, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?6 WHERE (SELECT COUNT(*) FROM webhooks WHERE tenant = ?1) < ?7
       ON CONFLICT (tenant, id) DO NOTHING
       RETURNING ${COLUMNS}`,
    )
    .bind(tenant, id, spec.url, events, spec.secret ?? newSecret, now, WEBHOOKS_PER_TENANT)
    .first();
  if (inserted) return { ok: true, created: true, subscription: toSubscription(inserted) };
  const replaced = await db
    .prepare(
      `UPDATE webhooks SET failing_since = CASE WHEN url = ?3 THEN failing_since END, url = ?3, events_json = ?4,
         secret = COALESCE(?5, secret), updated_at = ?6
       WHERE tenant = ?1 AND id = ?2 RETURNING ${COLUMNS}`,
    )
    .bind(tenant, id, spec.url, events, spec.secret ?? null, now)
    .first();
  return replaced ? { ok: true, created: false, subscription: toSubscription(replaced) } : { ok: false, code: "limit_reached" };
}

/** The receiver failed at `at`, after a success or none: the start of its failing run, unless one is running. */
export async function noteReceiverFailing(db: D1Database, tenant: string, id: string, at: number): Promise<void> {
  await db.prepare("UPDATE webhooks SET failing_since = ? WHERE tenant = ? AND id = ? AND failing_since IS NULL").bind(at, tenant, id).run();
}

/** The receiver answered 2xx: its failing run, if any, is over. */
export async function noteReceiverHealthy(db: D1Database, tenant: string, id: string): Promise<void> {
  await db.prepare("UPDATE webhooks SET failing_since = NULL WHERE tenant = ? AND id = ? AND failing_since IS NOT NULL").bind(tenant, id).run();
}

/** Deletes the subscription and its deliveries' record; false when there was none. */
export async function deleteSubscription(db: D1Database, tenant: string, id: string): Promise<boolean> {
  const [removed] = await db.batch([
    db.prepare("DELETE FROM webhooks WHERE tenant = ? AND id = ?").bind(tenant, id),
    // So that a subscription made again under this id starts with no record of deliveries it never made.
    db.prepare("DELETE FROM webhook_deliveries WHERE tenant = ? AND webhook_id = ?").bind(tenant, id),
  ]);
  return (removed?.meta.changes ?? 0) > 0;
}
