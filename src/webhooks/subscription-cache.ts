/**
 * Whether a tenant has any webhook subscription, as this isolate last read it from D1. Every commit of every
 * workflow asks, so the answer must cost a map lookup: D1 is read at most once per tenant per FRESH_MS per
 * isolate, after the commit, never between a workflow's load and persist. A subscription made in another
 * isolate is seen here within FRESH_MS; the events of that window go unannounced to it.
 */
import { hasSubscriptions } from "./subscriptions-db";

/** How long an answer read from D1 is trusted. */
export const FRESH_MS = 10_000;

const known = new Map<string, { has: boolean; readAt: number }>();

/** The cached answer, or undefined when there is none or it is stale: then the tenant may have subscriptions. */
export function cachedHasWebhooks(tenant: string, now: number): boolean | undefined {
  const entry = known.get(tenant);
  return entry && now - entry.readAt < FRESH_MS ? entry.has : undefined;
}

/**
 * The answer, read from D1 when the cached one is missing or stale. Each caller whose cache missed reads for
 * itself: the callers are different workflows' objects sharing this isolate, and a read's promise made in one
 * object's context resumes its awaiters in that context, where the runtime refuses another object's storage
 * ("Cannot perform I/O on behalf of a different Durable Object"): a shared read failed the other objects' ticks.
 */
export async function tenantHasWebhooks(db: D1Database, tenant: string): Promise<boolean> {
  const cached = cachedHasWebhooks(tenant, Date.now());
  if (cached !== undefined) return cached;
  const has = await hasSubscriptions(db, tenant);
  known.set(tenant, { has, readAt: Date.now() });
  return has;
}

/** A subscription was just made or removed in this isolate: its own objects need not wait for FRESH_MS. */
export function noteSubscriptionsChanged(tenant: string, has: boolean | undefined): void {
  if (has === undefined) known.delete(tenant);
  else known.set(tenant, { has, readAt: Date.now() });
}
