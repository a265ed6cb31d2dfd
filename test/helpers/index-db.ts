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

/** An index upsert as `interceptIndexWrites` hands it over: `run()` makes the write (its batch) and answers its result. */
export interface IndexWrite {
  run(): Promise<D1Result>;
}

/**
 * Intercepts the index upserts (`INSERT INTO workflows …`) prepared on `db`: each bound one goes to `wrap` with its
 * values, and what `wrap` returns stands in for it; every other statement is left as it is. An upsert is sent in a
 * batch with its minute of the series (src/workflow-index/d1-index.ts), so the batch is what `run()` sends.
 */
export function interceptIndexWrites(db: D1Database, wrap: (values: unknown[], bound: IndexWrite) => IndexWrite) {
  // A mark on the bound statement itself: the fault bindings wrap it (a proxy reads the mark through) before it is batched.
  const valuesOf = (statement: object): unknown[] | undefined => (statement as { [UPSERT_VALUES]?: unknown[] })[UPSERT_VALUES];
  const prepare = db.prepare.bind(db);
  const batch = db.batch.bind(db);
  const prepared = vi.spyOn(db, "prepare").mockImplementation((query: string) => {
    const statement = prepare(query);
    if (!/^\s*INSERT INTO workflows/i.test(query)) return statement;
    return new Proxy(statement, {
      get: (target, key) => {
        if (key !== "bind") return Reflect.get(target, key);
        return (...values: unknown[]) => Object.assign(target.bind(...values), { [UPSERT_VALUES]: values });
      },
    });
  });
  const batched = vi.spyOn(db, "batch").mockImplementation(async <T>(statements: D1PreparedStatement[]) => {
    const index = statements.findIndex((statement) => valuesOf(statement) !== undefined);
    if (index === -1) return batch<T>(statements);
    let results: D1Result<T>[] | undefined;
    const write: IndexWrite = { run: async () => ((results = await batch<T>(statements)), results[index]!) };
    const result = await wrap(valuesOf(statements[index]!)!, write).run();
    return results ?? statements.map(() => result as D1Result<T>);
  });
  return { mockRestore: () => (prepared.mockRestore(), batched.mockRestore()) };
}

const UPSERT_VALUES = Symbol("index upsert values");

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
