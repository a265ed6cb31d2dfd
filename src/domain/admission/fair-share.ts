/**
 * Who is filling the task queues. Back-pressure is per tenant (and, within a tenant, per workflow name): when the
 * queues fall behind, only the starts of those filling them at or past their fair share are refused. A tenant
 * starting one workflow a second while another starts thousands keeps getting in, and so does a tenant's nightly
 * schedule while the same tenant's batch floods the queue.
 */

/** Messages delivered for the first time for one workflow name of one tenant, over the consumers' recent window. */
export interface DeliveryCount {
  tenant: string;
  /** The workflow's definition name ("" for a message sent before messages carried it). */
  name: string;
  count: number;
}

/** Whose start is being admitted. */
export interface FairShareKey {
  tenant: string;
  name: string;
}

/** A key as one map key (a tenant and a name may hold any characters, so they are not joined by a separator). */
export function fairShareSlot({ tenant, name }: FairShareKey): string {
  return JSON.stringify([tenant, name]);
}

/** The counts summed per (tenant, name), dropping empty ones. */
export function sumDeliveries(counts: Iterable<DeliveryCount>): DeliveryCount[] {
  const sums = new Map<string, Map<string, number>>();
  for (const { tenant, name, count } of counts) {
    if (count <= 0) continue;
    const names = sums.get(tenant) ?? new Map<string, number>();
    names.set(name, (names.get(name) ?? 0) + count);
    sums.set(tenant, names);
  }
  return [...sums].flatMap(([tenant, names]) => [...names].map(([name, count]) => ({ tenant, name, count })));
}

/**
 * Whether `key` takes at least its fair share of the recent deliveries: its tenant at least 1/n of them (n
 * tenants delivered), and its name at least 1/m of its tenant's (m names of that tenant delivered). Max-min
 * fairness: a key below its share is never the reason the queue is behind, so it is never refused; two equally
 * noisy tenants are both at their share and both slowed. A key with nothing in the queue is never over it.
 */
export function overFairShare(deliveries: readonly DeliveryCount[], key: FairShareKey): boolean {
  const tenants = new Map<string, number>();
  for (const { tenant, count } of deliveries) tenants.set(tenant, (tenants.get(tenant) ?? 0) + count);
  const total = [...tenants.values()].reduce((sum, count) => sum + count, 0);
  const tenantCount = tenants.get(key.tenant) ?? 0;
  if (tenantCount === 0 || tenantCount * tenants.size < total) return false;
  const names = deliveries.filter((row) => row.tenant === key.tenant && row.count > 0);
  const nameCount = names.find((row) => row.name === key.name)?.count ?? 0;
  return nameCount > 0 && nameCount * names.length >= tenantCount;
}
