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
const reading = new Map<string, Promise<boolean>>();

/** The cached answer, or undefined when there is none or it is stale: then the tenant may have subscriptions. */
export function cachedHasWebhooks(tenant: string, now: number): boolean | undefined {
  const entry = known.get(tenant);
  return entry && now - entry.readAt < FRESH_MS ? entry.has : undefined;
}

/** The answer, read from D1 when the cached one is missing or stale; concurrent callers share one read. */
export async function tenantHasWebhooks(db: D1Database, tenant: string): Promise<boolean> {
  const cached = cachedHasWebhooks(tenant, Date.now());
  if (cached !== undefined) return cached;
  let read = reading.get(tenant);
  if (!read) {
    read = hasSubscriptions(db, tenant).then((has) => {
      known.set(tenant, { has, readAt: Date.now() });
      return has;
    });
    reading.set(tenant, read);
    void read.finally(() => reading.delete(tenant)).catch(() => undefined);
  }
  return read;
}

/** A subscription was just made or removed in this isolate: its own objects need not wait for FRESH_MS. */
export function noteSubscriptionsChanged(tenant: string, has: boolean | undefined): void {
  if (has === undefined) known.delete(tenant);
  else known.set(tenant, { has, readAt: Date.now() });
}
