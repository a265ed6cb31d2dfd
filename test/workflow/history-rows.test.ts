import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { uniqueId } from "../helpers/api";
import { schedulerStub } from "../helpers/scheduler";
import { applySchemaMigrations } from "../../src/workflow/schema";
import { HistoryRows } from "../../src/workflow/history-rows";
import type { HistoryEntryFields } from "../../src/domain/machine/history";

/** History's rows in a fresh object's real SQLite, through the statements the store runs. */
const inHistory = <T>(use: (history: HistoryRows, sql: SqlStorage) => T) =>
  runInDurableObject(schedulerStub(uniqueId("history-rows")), (_instance, state) => {
    const sql = state.storage.sql;
    applySchemaMigrations(sql);
    return use(new HistoryRows((statement, ...bindings) => sql.exec(statement, ...bindings)), sql);
  });

const started = (stepId: string, attempt = 1): HistoryEntryFields => ({ type: "step_started", stepId, attempt });
const rowCount = (sql: SqlStorage) => sql.exec<{ n: number }>("SELECT count(*) AS n FROM history").one().n;

describe("a workflow's history rows", () => {
  it("keeps a commit's events in one row, each with its own seq, numbered on across commits", async () => {
    const { rows, all, afterTwo } = await inHistory((history, sql) => {
      history.append([{ type: "workflow_started", data: { name: "w" } }, { type: "step_scheduled", stepId: "a" }, started("a")], 1_000);
      history.append([{ type: "step_succeeded", stepId: "a", attempt: 1 }, { type: "workflow_completed" }], 2_000);
      return { rows: rowCount(sql), all: history.page(0, 10), afterTwo: history.page(2, 2) };
    });
    expect(rows).toBe(2);
    expect(all).toEqual([
      { seq: 1, at: 1_000, type: "workflow_started", data: { name: "w" } },
      { seq: 2, at: 1_000, type: "step_scheduled", stepId: "a" },
      { seq: 3, at: 1_000, type: "step_started", stepId: "a", attempt: 1 },
      { seq: 4, at: 2_000, type: "step_succeeded", stepId: "a", attempt: 1 },
      { seq: 5, at: 2_000, type: "workflow_completed" },
    ]);
    // A page may start and end inside a row.
    expect(afterTwo.map((event) => event.seq)).toEqual([3, 4]);
  });

  it("pages through every event once, whatever the page size, and knows whether any follow", async () => {
    const { pages, after } = await inHistory((history) => {
      for (let commit = 0; commit < 7; commit += 1) history.append(Array.from({ length: commit % 3 + 1 }, (_, n) => started(`s${commit}`, n + 1)), commit);
      const pages = [1, 2, 5].map((size) => {
        const seqs: number[] = [];
        for (let page = history.page(0, size); page.length > 0; page = history.page(seqs.at(-1)!, size)) seqs.push(...page.map((event) => event.seq));
        return seqs;
      });
      return { pages, after: [history.hasAfter(0), history.hasAfter(12), history.hasAfter(13)] };
    });
    for (const seqs of pages) expect(seqs).toEqual(Array.from({ length: 13 }, (_, n) => n + 1));
    expect(after).toEqual([true, true, false]);
  });

  it("splits a commit of many large events over several rows, in order", async () => {
    const big = "x".repeat(30_000);
    const { rows, seqs, payloads } = await inHistory((history, sql) => {
      history.append(Array.from({ length: 10 }, (_, n) => ({ type: "step_scheduled", stepId: `s${n}`, data: { big } }) as HistoryEntryFields), 1);
      const events = history.page(0, 100);
      return { rows: rowCount(sql), seqs: events.map((event) => event.seq), payloads: events.every((event) => event.data?.big === big) };
    });
    expect(rows).toBeGreaterThan(1);
    expect(seqs).toEqual(Array.from({ length: 10 }, (_, n) => n + 1));
    expect(payloads).toBe(true);
  });

  it("finds the newest events of some types, newest first, across rows", async () => {
    const latest = await inHistory((history) => {
      history.append([started("a"), { type: "step_retry_scheduled", stepId: "a", attempt: 1 }], 1);
      history.append([started("a", 2), { type: "step_retry_scheduled", stepId: "a", attempt: 2 }, started("a", 3)], 2);
      return history.latest(["step_retry_scheduled"], 5).map((event) => [event.seq, event.attempt]);
    });
    expect(latest).toEqual([[4, 2], [2, 1]]);
  });
});
