/** The tenants' breakers in D1, for `GET /v1/targets`: the only module that speaks SQL to the `targets` table. */
import type { CircuitState } from "../domain/breaker/machine";

export interface TargetRow {
  tenant: string;
  host: string;
  state: CircuitState;
  failures: number;
  openUntil?: number;
  parked: number;
  version: number;
  updatedAt: number;
}

export type ListedTarget = Pick<TargetRow, "host" | "state" | "failures" | "openUntil" | "parked">;

/** Writes the row unless D1 already holds a newer version of it. */
export async function upsertTarget(db: D1Database, row: TargetRow): Promise<void> {
  await db
    .prepare(
      `INSERT INTO targets (tenant, host, state, failures, open_until, parked, version, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant, host) DO UPDATE SET
         state = excluded.state, failures = excluded.failures, open_until = excluded.open_until, parked = excluded.parked,
         version = excluded.version, updated_at = excluded.updated_at
       WHERE excluded.version >= targets.version`,
    )
    .bind(row.tenant, row.host, row.state, row.failures, row.openUntil ?? null, row.parked, row.version, row.updatedAt)
    .run();
}

type ListedRow = { host: string; state: CircuitState; failures: number; open_until: number | null; parked: number };

/** A page of the tenant's targets in host order, after `afterHost`. */
export async function listTargets(db: D1Database, tenant: string, limit: number, afterHost?: string): Promise<ListedTarget[]> {
  const { results } = await db
    .prepare(
      `SELECT host, state, failures, open_until, parked FROM targets WHERE tenant = ? ${afterHost === undefined ? "" : "AND host > ?"} ORDER BY host LIMIT ?`,
    )
    .bind(...(afterHost === undefined ? [tenant, limit] : [tenant, afterHost, limit]))
    .all<ListedRow>();
  return results.map((row) => ({
    host: row.host,
    state: row.state,
    failures: row.failures,
    ...(row.open_until === null ? {} : { openUntil: row.open_until }),
    parked: row.parked,
  }));
}
