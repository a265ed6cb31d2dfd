/** Which pools a tenant has (D1, migration 0010): what `GET /v1/pools` lists before it asks each pool object. */

/** The most pools one listing reads. */
export const MAX_POOLS_LISTED = 100;

export async function registerPool(env: Env, tenant: string, pool: string): Promise<void> {
  await env.DB.prepare("INSERT OR IGNORE INTO pools (tenant, name, created_at) VALUES (?, ?, ?)").bind(tenant, pool, Date.now()).run();
}

export async function poolNames(env: Env, tenant: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT name FROM pools WHERE tenant = ? ORDER BY name LIMIT ?").bind(tenant, MAX_POOLS_LISTED).all<{ name: string }>();
  return results.map((row) => row.name);
}
