/**
 * Which D1 database holds a workflow's index entry, and which hold a tenant's. One database serialises its writes
 * and holds 10 GB (docs/capacity.md), so the index is spread over INDEX_SHARDS databases: by tenant, then by hash
 * of the workflow id. Every object and isolate computes the same answer without asking anyone, and an entry lives
 * on exactly one shard, so a listing that merges the tenant's shards sees each workflow once.
 */
import { indexDatabaseBinding, indexShards, indexShardsPerTenant } from "../config";
import { fnv1a } from "../domain/security/fnv1a";

/** How many shards there are, and how many of them one tenant's entries spread over. */
export interface IndexLayout {
  shards: number;
  perTenant: number;
}

export function indexLayoutOf(env: Env): IndexLayout {
  return { shards: indexShards(env), perTenant: indexShardsPerTenant(env) };
}

/**
 * A tenant's shards: a window of `perTenant` consecutive shards (wrapping round) that starts at the tenant's hash,
 * so tenants are spread over all shards even when each spans few. With the default window every tenant is on
 * every shard.
 */
export function tenantShardsOf(tenant: string, layout: IndexLayout): number[] {
  const first = fnv1a(tenant) % layout.shards;
  return Array.from({ length: layout.perTenant }, (_, k) => (first + k) % layout.shards);
}

/** The shard of one workflow's entry: the workflow id's hash picks one of its tenant's shards. */
export function indexShardOf(tenant: string, workflowId: string, layout: IndexLayout): number {
  return (fnv1a(tenant) + (fnv1a(workflowId) % layout.perTenant)) % layout.shards;
}

function databaseOf(env: Env, shard: number): D1Database {
  // indexShards counts only bound databases, so the binding is there; DB is the fallback the types want.
  return indexDatabaseBinding(env, shard) ?? env.DB;
}

/** The database a workflow's index entry is written to and read from. */
export function indexDbFor(env: Env, tenant: string, workflowId: string): D1Database {
  return databaseOf(env, indexShardOf(tenant, workflowId, indexLayoutOf(env)));
}

/** The databases that may hold a tenant's entries: what a listing or the tenant's metrics read. */
export function tenantIndexDbs(env: Env, tenant: string): D1Database[] {
  return tenantShardsOf(tenant, indexLayoutOf(env)).map((shard) => databaseOf(env, shard));
}

/** Every shard in use, in order: what the sweep reads. */
export function allIndexDbs(env: Env): D1Database[] {
  return Array.from({ length: indexShards(env) }, (_, shard) => databaseOf(env, shard));
}
