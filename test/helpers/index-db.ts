import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { indexDbFor, indexLayoutOf, indexShardOf } from "../../src/workflow-index/index-shards";
import { uniqueId } from "./api";
import { gate } from "./gate";
import { schedulerStub } from "./scheduler";

export type IndexRow = { tenant: string; id: string; name: string; status: string; created_at: number; updated_at: number; ended_at: number | null; next_deadline_at: number | null; version: number };

const INDEX_COLUMNS = ["tenant", "id", "name", "status", "created_at", "updated_at", "ended_at", "next_deadline_at", "version"] as const;

/** The listing's own columns of a row, without the metrics columns written beside them. */
export function pickIndexColumns(row: IndexRow): IndexRow {
  return Object.fromEntries(INDEX_COLUMNS.map((column) => [column, row[column]])) as IndexRow;
}

/** A fresh workflow id whose index entry lands on `shard` for `tenant`, under the tests' INDEX_SHARDS. */
export function uniqueIdOnShard(shard: number, tenant = "default", prefix = "sharded"): string {
  const layout = indexLayoutOf(env);
  for (;;) {
    const id = uniqueId(prefix);
    if (indexShardOf(tenant, id, layout) === shard) return id;
  }
}

/** The index database (shard) that holds the workflow's entry. */
export function indexDbOf(id: string, tenant = "default"): D1Database {
  return indexDbFor(env, tenant, id);
}

/** The workflow's row in the D1 index, read directly from the shard that holds it. */
export async function indexRow(id: string, tenant = "default"): Promise<IndexRow | null> {
  return indexDbOf(id, tenant).prepare("SELECT * FROM workflows WHERE tenant = ? AND id = ?").bind(tenant, id).first<IndexRow>();
}

/**
 * Makes D1 refuse the index writes of one workflow's object (reads still work) until `restore()`, as an
 * outage of D1 would. Call before starting the workflow.
 */
export async function refuseIndexWrites(id: string, tenant = "default") {
  const refused = { count: 0, restore: () => undefined as void };
  await runInDurableObject(schedulerStub(id, tenant), (instance) => {
    const db = indexDbFor((instance as unknown as { env: Env }).env, tenant, id);
    const prepare = db.prepare.bind(db);
    const spy = vi.spyOn(db, "prepare").mockImplementation((query: string) => {
      if (/^\s*INSERT INTO workflows/i.test(query)) {
        refused.count += 1;
        throw new Error("D1_ERROR: injected outage");
      }
      return prepare(query);
    });
    refused.restore = () => spy.mockRestore();
  });
  return refused;
}

/**
 * Intercepts the index upserts (`INSERT INTO workflows …`) prepared on `db`: each bound one goes to `wrap` with its
 * values, and what `wrap` returns stands in for it; every other statement is left as it is.
 */
export function interceptIndexWrites(db: D1Database, wrap: (values: unknown[], bound: D1PreparedStatement) => unknown) {
  const prepare = db.prepare.bind(db);
  return vi.spyOn(db, "prepare").mockImplementation((query: string) => {
    const statement = prepare(query);
    if (!/^\s*INSERT INTO workflows/i.test(query)) return statement;
    return { bind: (...values: unknown[]) => wrap(values, statement.bind(...values)) } as unknown as D1PreparedStatement;
  });
}

/**
 * Holds the first index write of one workflow's entry with `status` in flight, unanswered, until `release()`, as
 * a D1 that never answers would; `held` turns true once it is made. Later writes go through. Call before the write.
 */
export async function holdIndexWrite(id: string, status: string, tenant = "default") {
  const answer = gate();
  const hold = { held: false, release: answer.open };
  await runInDurableObject(schedulerStub(id, tenant), (instance) => {
    interceptIndexWrites(indexDbFor((instance as unknown as { env: Env }).env, tenant, id), (values, bound) => {
      if (hold.held || values[1] !== id || values[3] !== status) return bound;
      hold.held = true;
      return { run: async () => answer.opened.then(() => bound.run()) };
    });
  });
  return hold;
}
