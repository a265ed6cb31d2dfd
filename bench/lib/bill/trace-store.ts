// The local trace store of a `wrangler dev`: every invocation and what it did (Durable Object requests, SQL
// statements with their rows read and written, D1 queries with their `meta`, queue sends, alarms) as spans, which
// wrangler's local explorer answers SQL queries over. The bill case reads what a run left there; nothing of the
// engines is instrumented for it.
import { requestJson } from "../../../scripts/lib/http-json.ts";
import { field } from "../../../scripts/lib/json.ts";

/** One span as the store keeps it; attributes parsed. */
export interface Span {
  traceId: string;
  spanId: string;
  parentId: string | null;
  /** The Worker it ran in (the script's name). */
  service: string | null;
  name: string;
  startMs: number;
  /** Whole milliseconds; null while the span is still open. */
  durationMs: number | null;
  attributes: Record<string, unknown>;
}

const API = "/cdn-cgi/local/explorer/api/local/observability";
const COLUMNS = "trace_id, span_id, parent_id, service, name, start_ms, duration_ms, json(attributes)";
/** The store answers at most this many rows a query: the spans are read a page at a time. */
const PAGE_ROWS = 10_000;

/** The store of the `wrangler dev` at `origin`: clear() before a run, spans() after it. */
export function traceStore(origin: string) {
  return {
    async clear(): Promise<void> {
      const { status, text } = await requestJson(`${origin}${API}/clear`, { method: "POST" });
      if (status !== 200) throw new Error(`clearing the local trace store answered ${status}: ${text.slice(0, 200)}`);
    },
    async spans(): Promise<Span[]> {
      const spans: Span[] = [];
      for (let after = 0; ; ) {
        const sql = `SELECT rowid, ${COLUMNS} FROM spans WHERE rowid > ? ORDER BY rowid LIMIT ${PAGE_ROWS}`;
        const { status, body, text } = await requestJson(`${origin}${API}/query`, { method: "POST", body: { sql, params: [after] }, timeoutMs: 120_000 });
        const rows = field(field(body, "result"), "rows");
        if (status !== 200 || !Array.isArray(rows)) throw new Error(`the local trace store answered ${status}: ${text.slice(0, 200)}`);
        spans.push(...rows.map((row) => spanOf((row as unknown[]).slice(1))));
        if (rows.length < PAGE_ROWS) return spans;
        after = Number((rows.at(-1) as unknown[])[0]);
      }
    },
  };
}

/** A row of the query above as a Span. */
export function spanOf(row: unknown): Span {
  const [traceId, spanId, parentId, service, name, startMs, durationMs, attributes] = row as unknown[];
  return {
    traceId: String(traceId),
    spanId: String(spanId),
    parentId: typeof parentId === "string" ? parentId : null,
    service: typeof service === "string" ? service : null,
    name: String(name),
    startMs: Number(startMs),
    durationMs: typeof durationMs === "number" ? durationMs : null,
    attributes: typeof attributes === "string" ? (JSON.parse(attributes) as Record<string, unknown>) : {},
  };
}
