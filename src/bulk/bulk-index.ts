/** Which bulk jobs a tenant has (D1, migration 0013): what `GET /v1/bulk` pages through before it asks each job. */
import type { ListPosition } from "../workflow-index/d1-index";

export interface BulkJobRef {
  id: string;
  createdAt: number;
}

export async function registerBulkJob(env: Env, tenant: string, job: { id: string; action: string; createdAt: number }): Promise<void> {
  await env.DB.prepare("INSERT OR IGNORE INTO bulk_jobs (tenant, id, action, created_at) VALUES (?, ?, ?, ?)").bind(tenant, job.id, job.action, job.createdAt).run();
}

/** Up to `limit + 1` of the tenant's jobs, newest first, past `after`: one more than a page says another follows. */
export async function listBulkJobRefs(env: Env, tenant: string, limit: number, after?: ListPosition): Promise<BulkJobRef[]> {
  const past = after === undefined ? "" : "AND (created_at < ? OR (created_at = ? AND id < ?))";
  const { results } = await env.DB.prepare(`SELECT id, created_at FROM bulk_jobs WHERE tenant = ? ${past} ORDER BY created_at DESC, id DESC LIMIT ?`)
    .bind(tenant, ...(after === undefined ? [] : [after.createdAt, after.createdAt, after.id]), limit + 1)
    .all<{ id: string; created_at: number }>();
  return results.map((row) => ({ id: row.id, createdAt: row.created_at }));
}
