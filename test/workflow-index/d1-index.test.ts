import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { IndexEntry } from "../../src/domain/machine/index-entry";
import { findOverdueWorkflows, upsertIndexEntry } from "../../src/workflow-index/d1-index";
import { uniqueId } from "../helpers/api";
import { indexDbOf, indexRow } from "../helpers/index-db";

function entry(id: string, fields: Partial<IndexEntry> = {}): IndexEntry {
  return { tenant: "d1-test", id, name: "n", status: "running", createdAt: 1_000, updatedAt: 1_000, nextDeadlineAt: 5_000, version: 1, ...fields };
}

/** Writes the entry to the shard that holds it, as the object's outbox does. */
const upsert = (written: IndexEntry) => upsertIndexEntry(indexDbOf(written.id, written.tenant), written);

describe("the D1 index", () => {
  it("case 18 (D1 index out of order): never moves a row back to an older version when a stale write arrives late", async () => {
    const id = uniqueId();
    await upsert(entry(id, { status: "completed", version: 7, updatedAt: 2_000, endedAt: 2_000 }));
    await upsert(entry(id, { status: "running", version: 3 }));
    expect(await indexRow(id, "d1-test")).toMatchObject({ status: "completed", version: 7, ended_at: 2_000 });
  });

  it("accepts a rewrite of the same version (a refreshed deadline)", async () => {
    const id = uniqueId();
    await upsert(entry(id, { version: 4, nextDeadlineAt: 5_000 }));
    await upsert(entry(id, { version: 4, nextDeadlineAt: 9_000 }));
    expect((await indexRow(id, "d1-test"))?.next_deadline_at).toBe(9_000);
  });

  it("finds open workflows whose deadline passed, most overdue first, and never ended ones", async () => {
    const [late, later, ended, future] = [uniqueId("late"), uniqueId("later"), uniqueId("ended"), uniqueId("future")];
    const base = 1_000_000_000;
    await upsertIndexEntry(env.DB, entry(late, { nextDeadlineAt: base + 10 }));
    await upsertIndexEntry(env.DB, entry(later, { nextDeadlineAt: base + 5, status: "compensating" }));
    await upsertIndexEntry(env.DB, entry(ended, { nextDeadlineAt: base + 1, status: "completed" }));
    await upsertIndexEntry(env.DB, entry(future, { nextDeadlineAt: base + 1_000 }));
    const overdue = (await findOverdueWorkflows(env.DB, base + 100, 100)).filter((row) => row.tenant === "d1-test" && [late, later, ended, future].includes(row.id));
    expect(overdue.map((row) => row.id)).toEqual([later, late]);
  });
});
