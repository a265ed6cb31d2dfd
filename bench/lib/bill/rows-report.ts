// The rows case's table: SQLite rows written per workflow by statement, for each workflow size the run measured,
// and the line through them (rows per step, rows per workflow), for each engine whose user pays per row.
import type { EngineName } from "../engines/engine.ts";
import { ENGINE_LABELS, formatNumber } from "../figures.ts";
import type { Results } from "../results.ts";
import { rowsPerWorkflow } from "./bill-figures.ts";
import { fitRows } from "./row-breakdown.ts";

const ENGINES: readonly EngineName[] = ["shepherd", "floor"];

/** One engine's table: a row per statement (rows written per workflow, and in brackets how often it ran), then the total. */
function engineTable(results: Results, engine: EngineName, sizes: readonly number[]): string {
  const measured = sizes.flatMap((steps) => {
    const per = rowsPerWorkflow(results, engine, steps);
    return per ? [{ steps, ...per }] : [];
  });
  if (measured.length === 0) return "";
  const labels = [...new Set(measured.flatMap((size) => [...size.rows.keys()]))];
  const largest = measured.at(-1)!;
  labels.sort((a, b) => (largest.rows.get(b) ?? 0) - (largest.rows.get(a) ?? 0) || a.localeCompare(b));
  const lines = [
    `| ${ENGINE_LABELS[engine]}: rows written per workflow (statements) | ${measured.map((size) => `${size.steps} step${size.steps === 1 ? "" : "s"}`).join(" | ")} |`,
    `| --- |${measured.map(() => " ---: |").join("")}`,
  ];
  for (const label of labels) {
    const cells = measured.map((size) => (size.rows.has(label) ? `${formatNumber(size.rows.get(label)!)} (${formatNumber(size.statements.get(label) ?? 0)})` : "—"));
    lines.push(`| ${label} | ${cells.join(" | ")} |`);
  }
  lines.push(`| **total** | ${measured.map((size) => `**${formatNumber(size.total)}**`).join(" | ")} |`);
  lines.push(`| the remote's calls the trace store has | ${measured.map((size) => (size.traceCoverage === undefined ? "n/a" : `${(size.traceCoverage * 100).toFixed(size.traceCoverage < 1 ? 1 : 0)} %`)).join(" | ")} |`);
  const fit = fitRows(measured.map((size) => ({ steps: size.steps, rows: size.total })));
  const line = fit ? `\n\n${ENGINE_LABELS[engine]}: about ${formatNumber(fit.perStep)} rows per step and ${formatNumber(fit.perWorkflow)} per workflow (the least-squares line through the totals).` : "";
  return `${lines.join("\n")}${line}`;
}

/** Every engine's table; "" when the run had no rows case. */
export function renderRowsBreakdown(results: Results, sizes: readonly number[]): string {
  return ENGINES.map((engine) => engineTable(results, engine, sizes)).filter(Boolean).join("\n\n");
}
