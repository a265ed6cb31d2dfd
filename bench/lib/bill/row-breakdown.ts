// Where the SQLite rows written go: a run's statements (spans of trace-store.ts) grouped by what they do to which
// table, with the setAlarm calls that bill as a row each, and the fit of rows per workflow against its step count
// (rows = per workflow + per step × steps). Pure.
import { isEmulatorStatement } from "./trace-counts.ts";
import type { Span } from "./trace-store.ts";

/** One source of rows written: a statement's label, how often it ran, the rows it wrote. */
export interface RowSource {
  label: string;
  statements: number;
  rowsWritten: number;
}

export const SET_ALARM = "setAlarm (billed as one row written)";
export const SCHEMA = "schema: CREATE TABLE / INDEX";

/**
 * A statement by its verb and table, enough to tell the writes apart: "INSERT INTO history", "INSERT INTO workflow
 * (upsert)", "DELETE FROM outbox WHERE seq", "INSERT INTO outbox ('webhooks')". Schema statements are one source.
 */
export function statementLabel(sql: string): string {
  const text = sql.replace(/\s+/g, " ").trim();
  if (/^(CREATE|DROP|ALTER)\b/i.test(text)) return SCHEMA;
  const insert = /^(INSERT(?: OR \w+)? INTO|REPLACE INTO) (\w+)/i.exec(text);
  if (insert) {
    const literal = /\bSELECT '([^']+)'/i.exec(text)?.[1];
    const upsert = /\bON CONFLICT\b.*\bDO UPDATE\b/i.test(text);
    return `${insert[1]!.toUpperCase()} ${insert[2]}${literal ? ` ('${literal}')` : ""}${upsert ? " (upsert)" : ""}`;
  }
  const change = /^(DELETE FROM|UPDATE) (\w+)(?:.*?\bWHERE (\w+))?/i.exec(text);
  if (change) return `${change[1]!.toUpperCase()} ${change[2]}${change[3] ? ` WHERE ${change[3]}` : ""}`;
  const cte = /^WITH\b.*?\b(INSERT(?: OR \w+)? INTO|UPDATE|DELETE FROM) (\w+)/i.exec(text);
  if (cte) return `WITH … ${cte[1]!.toUpperCase()} ${cte[2]}`;
  return text.slice(0, 48);
}

/** Rows written by source, most first; sources that wrote nothing are left out. */
export function rowsWrittenBy(spans: readonly Span[]): RowSource[] {
  const sources = new Map<string, RowSource>();
  const add = (label: string, rows: number): void => {
    const source = sources.get(label) ?? { label, statements: 0, rowsWritten: 0 };
    source.statements += 1;
    source.rowsWritten += rows;
    sources.set(label, source);
  };
  for (const span of spans) {
    if (span.name === "durable_object_storage_setAlarm") add(SET_ALARM, 1);
    const rows = span.attributes["cloudflare.durable_object.response.rows_written"];
    if (typeof rows === "number" && !isEmulatorStatement(span)) add(statementLabel(String(span.attributes["db.query.text"] ?? span.name)), rows);
  }
  return [...sources.values()].filter((source) => source.rowsWritten > 0).sort((a, b) => b.rowsWritten - a.rowsWritten || a.label.localeCompare(b.label));
}

/** Rows per workflow as perWorkflow + perStep × steps: the least-squares line through (steps, rows); undefined below two sizes. */
export function fitRows(points: ReadonlyArray<{ steps: number; rows: number }>): { perStep: number; perWorkflow: number } | undefined {
  if (new Set(points.map((point) => point.steps)).size < 2) return undefined;
  const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
  const [meanSteps, meanRows] = [mean(points.map((point) => point.steps)), mean(points.map((point) => point.rows))];
  const covariance = points.reduce((sum, point) => sum + (point.steps - meanSteps) * (point.rows - meanRows), 0);
  const variance = points.reduce((sum, point) => sum + (point.steps - meanSteps) ** 2, 0);
  const perStep = covariance / variance;
  return { perStep, perWorkflow: meanRows - perStep * meanSteps };
}
