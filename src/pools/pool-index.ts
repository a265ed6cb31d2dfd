/** Which pools a tenant has (D1, migration 0010): what `GET /v1/pools` lists before it asks each pool object. */
import { poolFor } from "./pool-stub";
import type { PoolStats } from "./pool-types";

/** The most pools one listing reads. */
export const MAX_POOLS_LISTED = 100;

export async function registerPool(env: Env, tenant: string, pool: string): Promise<void> {
  await env.DB.prepare("INSERT OR IGNORE INTO pools (tenant, name, created_at) VALUES (?, ?, ?)").bind(tenant, pool, Date.now()).run();
}

/** Each of the tenant's pools as its object counts it (`GET /v1/pools`, and the pools in `GET /v1/metrics`). */
export async function poolStats(env: Env, tenant: string): Promise<PoolStats[]> {
  const names = await poolNames(env, tenant);
  return Promise.all(names.map((name) => poolFor(env, tenant, name).stats(name)));
}

async function poolNames(env: Env, tenant: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT name FROM pools WHERE tenant = ? ORDER BY name LIMIT ?").bind(tenant, MAX_POOLS_LISTED).all<{ name: string }>();
  return results.map((row) => row.name);
}
