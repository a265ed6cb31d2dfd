import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, historyOf, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { applySchemaMigrations, SCHEMA_MIGRATIONS } from "../../src/workflow/schema";

afterEach(() => vi.restoreAllMocks());

type Row = Record<string, SqlStorageValue>;

/** Every table's columns and indexes, and whether it has a rowid and an AUTOINCREMENT sequence: what code can tell. */
function shapeOf(sql: SqlStorage) {
  const rows = (statement: string) => sql.exec<Row>(statement).toArray();
  const withoutRowid = new Set(rows("PRAGMA table_list").filter((table) => table.wr === 1).map((table) => table.name));
  // SQLite's own tables and the runtime's (`_cf_…`, e.g. an alarm's) are not the schema's.
  const tables = rows("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 7) <> 'sqlite_' AND substr(name, 1, 4) <> '_cf_' ORDER BY name");
  return Object.fromEntries(
    tables.map(({ name, sql: created }) => [
      String(name),
      {
        columns: rows(`PRAGMA table_info(${name})`).map(({ name: column, type, notnull, dflt_value, pk }) => ({ column, type, notnull, dflt_value, pk })),
        indexes: rows(`PRAGMA index_list(${name})`)
          .map((index) => ({ name: index.name, unique: index.unique, origin: index.origin, on: rows(`PRAGMA index_info(${index.name})`).map((column) => column.name) }))
          .sort((a, b) => String(a.name).localeCompare(String(b.name))),
        withoutRowid: withoutRowid.has(name),
        autoincrement: /AUTOINCREMENT/i.test(String(created)),
      },
    ] as const),
  );
}

const versionsOf = (sql: SqlStorage) => sql.exec<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version").toArray().map((row) => row.version);

/** What an older deployment left: the entries up to `version`, each applied and recorded as it did. */
function applyEntries(sql: SqlStorage, version: number): void {
  sql.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
  SCHEMA_MIGRATIONS.slice(0, version).forEach((entry, index) => sql.exec(`${entry}\nINSERT INTO schema_migrations (version, applied_at) VALUES (${index + 1}, 0);`));
}

/** A fresh object to build a schema in; its store, constructed first, found none and made none. */
const inProbe = <T>(build: (sql: SqlStorage) => T) => runInDurableObject(schedulerStub(uniqueId("probe")), (_instance, state) => build(state.storage.sql));

describe("the workflow object's schema", () => {
  it("gives a new object the baseline in one call, recorded as one row of the latest version", async () => {
    const { calls, rowsWritten, versions } = await inProbe((sql) => {
      const exec = vi.spyOn(sql, "exec");
      const rowsWritten = applySchemaMigrations(sql);
      const calls = exec.mock.calls.length;
      exec.mockRestore();
      return { calls, rowsWritten, versions: versionsOf(sql) };
    });
    // Whether the object has a schema, then the baseline with its record.
    expect(calls).toBe(2);
    expect(versions).toEqual([SCHEMA_MIGRATIONS.length]);
    expect(rowsWritten).toBe(1);
  });

  it("builds from the baseline the tables the entries build, but for what saves rows", async () => {
    const fromBaseline = await inProbe((sql) => (applySchemaMigrations(sql), shapeOf(sql)));
    const fromEntries = await inProbe((sql) => (applyEntries(sql, SCHEMA_MIGRATIONS.length), shapeOf(sql)));
    // Where it saves rows: the outbox's seq is the rowid, without AUTOINCREMENT's sequence row; a step's row is its
    // primary key's entry, without a rowid (which makes the key NOT NULL, as the store always wrote it).
    const keyNotNull = fromEntries.steps!.columns.map((column) => (column.column === "step_id" ? { ...column, notnull: 1 } : column));
    expect(fromBaseline).toEqual({
      ...fromEntries,
      outbox: { ...fromEntries.outbox, autoincrement: false },
      steps: { ...fromEntries.steps, columns: keyNotNull, withoutRowid: true },
    });
  });

  it("gives a new workflow's object the baseline", async () => {
    mockRemote(() => json({ ok: true }));
    const { id } = await start({ name: "baseline", defaults: FAST, steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }] });
    await waitForStatus(id, "completed");
    const stored = await runInDurableObject(schedulerStub(id), (_instance, state) => ({ shape: shapeOf(state.storage.sql), versions: versionsOf(state.storage.sql) }));
    expect(stored.shape).toEqual(await inProbe((sql) => (applySchemaMigrations(sql), shapeOf(sql))));
    expect(stored.versions).toEqual([SCHEMA_MIGRATIONS.length]);
  });

  it("catches an object an older deployment created up entry by entry, and runs its workflow in the older tables", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId("older");
    // An object from before map items and exchanges: its tables have the entries' shapes, not the baseline's.
    const older = await runInDurableObject(schedulerStub(id), (_instance, state) => (applyEntries(state.storage.sql, 4), shapeOf(state.storage.sql)));
    await evictDurableObject(schedulerStub(id));
    const definition = {
      name: "older",
      defaults: FAST,
      steps: [
        { id: "a", action: { type: "http", url: `${REMOTE}/a` } },
        { id: "go", waitForEvent: { event: "go", timeoutMs: 3_600_000 } },
        { id: "b", action: { type: "http", url: `${REMOTE}/b` } },
      ],
    };
    await start(definition, { id });
    await waitForStep(id, "go", "waiting");
    await evictDurableObject(schedulerStub(id));
    expect((await api("POST", `/v1/workflows/${id}/events`, { event: "go" })).status).toBe(202);
    await waitForStatus(id, "completed");
    const stored = await runInDurableObject(schedulerStub(id), (_instance, state) => ({ shape: shapeOf(state.storage.sql), versions: versionsOf(state.storage.sql) }));
    expect(stored.versions).toEqual(SCHEMA_MIGRATIONS.map((_, index) => index + 1));
    expect(stored.shape.events).toBeUndefined();
    for (const table of ["workflow", "steps", "outbox"]) expect(stored.shape[table]).toMatchObject({ withoutRowid: older[table]!.withoutRowid, autoincrement: older[table]!.autoincrement });
    const history = await historyOf(id);
    expect(history.map((event) => event.seq)).toEqual(history.map((_, index) => index + 1));
    expect(history.at(-1)?.type).toBe("workflow_completed");
  });

  it("moves an older object's history to one row per commit, each event with its seq and fields, and numbers on from it", async () => {
    const id = uniqueId("older-history");
    await runInDurableObject(schedulerStub(id), (_instance, state) => {
      const sql = state.storage.sql;
      applyEntries(sql, 6);
      const insert = "INSERT INTO events (at, type, step_id, attempt, data_json) VALUES (?, ?, ?, ?, ?)";
      sql.exec(insert, 1_000, "workflow_started", null, null, JSON.stringify({ name: "older", note: null }));
      sql.exec(insert, 2_000, "step_started", "a", 1, null);
      sql.exec(insert, 3_000, "step_failed", "a", 1, JSON.stringify({ error: { message: "no" } }));
    });
    await evictDurableObject(schedulerStub(id));
    const { moved, rows } = await runInDurableObject(schedulerStub(id), (instance, state) => ({
      moved: instance.history(0, 10),
      rows: state.storage.sql.exec("SELECT count(*) AS n FROM history").one().n,
    }));
    expect(moved).toEqual([
      { seq: 1, at: 1_000, type: "workflow_started", data: { name: "older", note: null } },
      { seq: 2, at: 2_000, type: "step_started", stepId: "a", attempt: 1 },
      { seq: 3, at: 3_000, type: "step_failed", stepId: "a", attempt: 1, data: { error: { message: "no" } } },
    ]);
    expect(rows).toBe(3);
    expect(await runInDurableObject(schedulerStub(id), (instance) => instance.history(2, 10).map((event) => event.seq))).toEqual([3]);
  });
});
