/** The tenant's schedule ids in D1, for listing; each schedule's state lives in its own object. */

export async function indexSchedule(db: D1Database, tenant: string, id: string, createdAt: number): Promise<void> {
  await db.prepare("INSERT OR IGNORE INTO schedules (tenant, id, created_at) VALUES (?, ?, ?)").bind(tenant, id, createdAt).run();
}

export async function unindexSchedule(db: D1Database, tenant: string, id: string): Promise<void> {
  await db.prepare("DELETE FROM schedules WHERE tenant = ? AND id = ?").bind(tenant, id).run();
}

/** A page of ids in id order, after `afterId`. */
export async function listScheduleIds(db: D1Database, tenant: string, limit: number, afterId?: string): Promise<string[]> {
  const { results } = await db
    .prepare(`SELECT id FROM schedules WHERE tenant = ? ${afterId === undefined ? "" : "AND id > ?"} ORDER BY id LIMIT ?`)
    .bind(...(afterId === undefined ? [tenant, limit] : [tenant, afterId, limit]))
    .all<{ id: string }>();
  return results.map((row) => row.id);
}
