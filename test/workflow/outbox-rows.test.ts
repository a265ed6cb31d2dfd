import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { uniqueId } from "../helpers/api";
import { schedulerStub } from "../helpers/scheduler";
import { applySchemaMigrations } from "../../src/workflow/schema";
import { OutboxRows } from "../../src/workflow/outbox-rows";
import type { WriteIndexEntry } from "../../src/domain/machine/effects";

const TIMES = { now: 1, sendBy: 2 };
const indexEntry = (status: string) => ({ type: "WriteIndexEntry", entry: { status } }) as unknown as WriteIndexEntry;

describe("the outbox's rows", () => {
  it("never give a delivered row's seq to a new row while a delivery of it may be in flight, nor after a restart", async () => {
    const seqs = await runInDurableObject(schedulerStub(uniqueId("outbox-rows")), (_instance, state) => {
      const sql = state.storage.sql;
      applySchemaMigrations(sql);
      const rows = () => new OutboxRows((statement, ...bindings) => sql.exec(statement, ...bindings), () => true);
      const instance = rows();
      instance.write(indexEntry("running"), TIMES);
      const [first] = instance.ofKind("index");
      // A newer entry replaces it while its delivery is out: the delivery's removal, after its await, must miss it.
      instance.write(indexEntry("completed"), TIMES);
      const [second] = instance.ofKind("index");
      instance.remove([first!.seq]);
      const kept = instance.ofKind("index").map((row) => row.seq);
      instance.remove([second!.seq]);
      // The next instance has no delivery in flight: it numbers on from what storage holds.
      const next = rows();
      next.write(indexEntry("failed"), TIMES);
      return { first: first!.seq, second: second!.seq, kept, afterRestart: next.ofKind("index")[0]!.seq, stored: sql.exec("SELECT seq FROM outbox").toArray().map((row) => row.seq) };
    });
    expect(seqs.second).toBeGreaterThan(seqs.first);
    expect(seqs.kept).toEqual([seqs.second]);
    expect(seqs.stored).toEqual([seqs.afterRestart]);
  });
});
