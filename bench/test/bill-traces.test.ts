// What the spans of a local trace store count in billed units, and where the rows written go by statement.
// Plain Node (the bench is a Node tool, outside the Workers test projects): `node --test bench/test/*.test.ts`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { measureWhole, perStep } from "../lib/bill/bill-case.ts";
import { fitRows, rowsWrittenBy, SCHEMA, SET_ALARM, statementLabel } from "../lib/bill/row-breakdown.ts";
import { countSpans, requestsTo, spansToCount, unionMs } from "../lib/bill/trace-counts.ts";
import { spanOf } from "../lib/bill/trace-store.ts";
import type { Span } from "../lib/bill/trace-store.ts";

let next = 0;
/** A span of trace `trace`, under `parent`, from `at` for `ms`. */
const span = (trace: string, parent: Span | null, name: string, at: number, ms: number, attributes: Record<string, unknown> = {}): Span => ({
  traceId: trace, spanId: `s${next++}`, parentId: parent?.spanId ?? null, service: "shepherd", name, startMs: at, durationMs: ms, attributes,
});
const exec = (trace: string, parent: Span, sql: string, written: number, read = 0): Span =>
  span(trace, parent, "durable_object_storage_exec", parent.startMs, 0, { "db.query.text": sql, "cloudflare.durable_object.response.rows_written": written, "cloudflare.durable_object.response.rows_read": read });

/** The spans of `root` calling `method` on object `object`, which runs [at, at + ms): the object's invocation last. */
function callInto(trace: string, root: Span, object: string, method: string, at: number, ms: number): Span[] {
  const subrequest = span(trace, root, "durable_object_subrequest", at, ms, { objectId: object });
  const session = span(trace, subrequest, "jsRpcSession", at, ms);
  const call = span(trace, session, "jsRpcCall", at, ms, { "jsrpc.method": method });
  return [subrequest, session, call, span(trace, call, "jsrpc", at, ms, { "faas.trigger": "jsrpc", "jsrpc.method": method })];
}
const invocationOf = (spans: Span[]): Span => spans.at(-1)!;

describe("countSpans", () => {
  const start = span("t1", null, "POST", 0, 50, { "faas.trigger": "http", "http.request.method": "POST" });
  const [calls, second, elsewhere] = [callInto("t1", start, "A", "start", 10, 20), callInto("t1", start, "A", "report", 20, 20), callInto("t1", start, "B", "reserve", 10, 5)];
  const first = invocationOf(calls);
  // The store closes an alarm's span when its object next wakes: its last traced work ends it.
  const alarm = span("t2", null, "alarm", 100, 5000, { "faas.trigger": "timer" });
  const spans = [
    start, ...calls, ...second, ...elsewhere, alarm,
    span("t2", alarm, "fetch", 100, 40),
    exec("t1", first, "INSERT INTO events (at) VALUES (?)", 2, 1),
    exec("t1", first, "INSERT OR REPLACE INTO __miniflare_do_name (id, name) VALUES (1, ?)", 1),
    span("t1", first, "durable_object_storage_setAlarm", 12, 0),
    span("t1", first, "d1_batch", 15, 5, { "cloudflare.d1.response.rows_written": 7, "cloudflare.d1.response.rows_read": 1 }),
    span("t1", first, "queue_send", 16, 1),
    span("t3", null, "queue", 200, 10, { "faas.trigger": "pubsub" }),
  ];
  const counts = countSpans(spans);

  it("counts Worker invocations (requests, queue batches) apart from the calls into objects and their alarms", () => {
    assert.equal(counts.workerRequests, 2);
    assert.equal(counts.queueBatches, 1);
    assert.equal(counts.doRequests, 4);
    assert.deepEqual(counts.doRequestsBy, { start: 1, report: 1, reserve: 1, alarm: 1 });
  });

  it("merges one object's overlapping requests, and ends an alarm with the last work it traced", () => {
    assert.equal(counts.doActiveMs, 30 + 5 + 40);
  });

  it("sums rows from the statements' meta, a setAlarm as one row written, not the local runtime's own table", () => {
    assert.equal(counts.sqliteRowsWritten, 3);
    assert.equal(counts.sqliteRowsRead, 1);
    assert.equal(counts.alarmSets, 1);
    assert.equal(counts.d1RowsWritten, 7);
    assert.equal(counts.d1RowsRead, 1);
    assert.equal(counts.queueSends, 1);
  });

  it("leaves out every span of a trace whose root the caller does not keep (the harness's status reads)", () => {
    const read = span("t9", null, "GET", 300, 5, { "faas.trigger": "http", "http.request.method": "GET" });
    const kept = spansToCount([...spans, read, ...callInto("t9", read, "A", "describe", 301, 2)], (root) => root.attributes["http.request.method"] !== "GET");
    assert.equal(countSpans(kept).doRequests, counts.doRequests);
    assert.equal(countSpans(kept).workerRequests, counts.workerRequests);
  });

  it("reads the store's rows, attributes as JSON", () => {
    const parsed = spanOf(["t", "s", null, "shepherd", "d1_run", 5, null, "{\"cloudflare.d1.response.rows_written\":3}"]);
    assert.deepEqual(parsed, { traceId: "t", spanId: "s", parentId: null, service: "shepherd", name: "d1_run", startMs: 5, durationMs: null, attributes: { "cloudflare.d1.response.rows_written": 3 } });
  });
});

describe("the store's completeness", () => {
  it("counts the traced requests to an origin, to hold against what that origin received", () => {
    const root = span("t", null, "alarm", 0, 1, { "faas.trigger": "timer" });
    const spans = [span("t", root, "fetch", 0, 1, { "url.full": "http://127.0.0.1:8800/ok" }), span("t", root, "fetch", 0, 1, { "url.full": "http://d1/query" })];
    assert.equal(requestsTo(spans, "http://127.0.0.1:8800"), 1);
  });

  it("measures again while the store missed part of the run, and keeps the most complete measurement", async () => {
    const coverages = [0.5, 0.9, 0.8];
    const tries: number[] = [];
    const best = await measureWhole("test", async (attempt) => (tries.push(attempt), { traceCoverage: coverages[attempt - 1]!, rows: attempt }));
    assert.deepEqual(tries, [1, 2, 3]);
    assert.deepEqual(best, { traceCoverage: 0.9, rows: 2 });
    const once: number[] = [];
    await measureWhole("test", async (attempt) => (once.push(attempt), { traceCoverage: 1 }));
    assert.deepEqual(once, [1]);
  });
});

describe("unionMs", () => {
  it("counts overlapping and touching intervals once, and apart ones each", () => {
    assert.equal(unionMs([[0, 10], [5, 15], [15, 20], [30, 31]]), 21);
    assert.equal(unionMs([]), 0);
  });
});

describe("perStep", () => {
  it("divides the run's counts by its steps, and what the object requests called too", () => {
    const figures = perStep({ ...countSpans([]), sqliteRowsWritten: 100, doRequestsBy: { report: 10 } }, 2, 50);
    assert.equal(figures.steps, 10);
    assert.equal(figures.sqliteRowsWritten, 10);
    assert.equal(figures["doRequests.report"], 1);
    assert.equal(figures.cpuMs, 5);
    assert.equal(figures.workflowInvocations, 0.2);
  });
});

describe("statementLabel", () => {
  it("names a write by its verb and table, an upsert, an INSERT … SELECT's literal and a WHERE's column", () => {
    assert.equal(statementLabel("INSERT INTO events (at, type) VALUES (?, ?)"), "INSERT INTO events");
    assert.equal(statementLabel("INSERT INTO steps (step_id) VALUES (?)\n  ON CONFLICT (step_id) DO UPDATE SET state_json = excluded.state_json"), "INSERT INTO steps (upsert)");
    assert.equal(statementLabel("INSERT INTO outbox (kind) SELECT 'webhooks', ? WHERE NOT EXISTS (SELECT 1)"), "INSERT INTO outbox ('webhooks')");
    assert.equal(statementLabel("insert or replace into plan (singleton) values (1)"), "INSERT OR REPLACE INTO plan");
    assert.equal(statementLabel("DELETE FROM outbox WHERE seq IN (?)"), "DELETE FROM outbox WHERE seq");
    assert.equal(statementLabel("UPDATE outbox SET attempts = 1"), "UPDATE outbox");
    assert.equal(statementLabel("CREATE TABLE workflow (singleton INTEGER PRIMARY KEY); CREATE INDEX x ON y (z)"), SCHEMA);
  });
});

describe("rowsWrittenBy", () => {
  it("groups the rows written by statement, most first, with the alarms set and without the local runtime's table", () => {
    const root = span("t", null, "jsrpc", 0, 1, { "faas.trigger": "jsrpc" });
    const sources = rowsWrittenBy([
      exec("t", root, "INSERT INTO events (at) VALUES (?)", 2),
      exec("t", root, "INSERT INTO events (at) VALUES (?)", 2),
      exec("t", root, "SELECT seq FROM outbox", 0, 3),
      exec("t", root, "INSERT OR REPLACE INTO __miniflare_do_name (id, name) VALUES (1, ?)", 1),
      span("t", root, "durable_object_storage_setAlarm", 0, 0),
    ]);
    assert.deepEqual(sources, [
      { label: "INSERT INTO events", statements: 2, rowsWritten: 4 },
      { label: SET_ALARM, statements: 1, rowsWritten: 1 },
    ]);
  });
});

describe("fitRows", () => {
  it("splits rows per workflow into a part per step and a part per workflow", () => {
    const fit = fitRows([{ steps: 1, rows: 30 }, { steps: 5, rows: 74 }, { steps: 50, rows: 569 }]);
    assert.ok(fit && Math.abs(fit.perStep - 11) < 1e-9 && Math.abs(fit.perWorkflow - 19) < 1e-9, JSON.stringify(fit));
    assert.equal(fitRows([{ steps: 5, rows: 74 }]), undefined);
  });
});
