// The Fan-out section of the tables: one row per engine and item count, medians over the repeats, and
// whether each repeat completed.
import { median } from "../../scripts/lib/stats.ts";
import type { BenchOptions } from "./args.ts";
import type { EngineName } from "./engines/engine.ts";
import { ENGINE_LABELS, figures, formatNumber } from "./figures.ts";
import type { Results } from "./results.ts";

/** The columns after "completed" and "ended as": the figure, its heading, whether it is a count. */
const COLUMNS: Array<{ key: string; label: string; count?: boolean }> = [
  { key: "itemsAtRemote", label: "items at the remote", count: true },
  { key: "wallS", label: "wall (s)" },
  { key: "itemsPerSec", label: "items/s" },
  { key: "cpuMsPerItem", label: "CPU ms/item" },
  { key: "cpuS", label: "workerd CPU (s)" },
  { key: "peakRssMb", label: "peak RSS (MB)" },
  { key: "rssGrowthMb", label: "RSS growth (MB)" },
  { key: "startS", label: "start answered (s)" },
  { key: "gaveUpAfterS", label: "gave up after (s)" },
];

export const FAN_OUT_NOTE = `One workflow over N items (0 … N-1), each a POST of \`{n, item}\` to \`/ok\`, which answers at once, under the
default retry policy and timeouts. Shepherd: one \`map\` step with \`maxConcurrency\` (\`--fanout-concurrency\`,
default 100); Workflows: one instance doing \`Promise.all\` of a \`step.do\` per item (no bound of its own; the
runtime's limit on simultaneous connections paces the calls). completed: repeats that completed / repeats; ended
as: the engine's final status (\`not ended\` within the bound, \`start_<status>\` for a refused start). Wall time:
start request → the engine's completion stamp; items/s = N ÷ that. CPU ms/item: workerd CPU from the start request
until the harness stopped waiting, status reads discounted (workerd CPU, in s), ÷ items that reached the remote, for
a run that completed. Peak RSS: the
workerd processes' summed RSS, sampled every 200 ms; growth: the peak minus the RSS before the run.`;

/** The median of one figure over an engine's repeats at N items; undefined when none has it. */
function figure(results: Results, engine: EngineName, items: number, key: string): number | undefined {
  return median(figures(results.engines[engine]?.[`fanout-${items}`], key));
}

/** "completed / repeats", the final statuses seen, then the columns; "error" when the case itself failed. */
function cells(results: Results, engine: EngineName, items: number): string[] {
  const runs = results.engines[engine]?.[`fanout-${items}`];
  if (!Array.isArray(runs)) return ["error", "—", ...COLUMNS.map(() => "—")];
  const completed = runs.filter((run) => run.completed === 1).length;
  const endings = [...new Set(runs.map((run) => String(run.endedAs)))].join(", ");
  const values = COLUMNS.map(({ key, count }) => {
    const value = figure(results, engine, items, key);
    if (value === undefined) return "n/a";
    return count ? value.toFixed(0) : formatNumber(value);
  });
  return [`${completed === runs.length ? "yes" : completed === 0 ? "no" : "partly"} (${completed}/${runs.length})`, endings, ...values];
}

/** The Fan-out table, empty when the run had no fan-out case. */
export function renderFanOutTable(results: Results, options: Pick<BenchOptions, "cases" | "fanOutSizes">): string {
  if (!options.cases.includes("fanout")) return "";
  const sizes = [...options.fanOutSizes].sort((a, b) => a - b);
  const lines = [
    `| Engine | N | completed | ended as | ${COLUMNS.map((column) => column.label).join(" | ")} |`,
    `| --- | ---: | --- | --- | ${COLUMNS.map(() => "---:").join(" | ")} |`,
  ];
  for (const engine of Object.keys(results.engines) as EngineName[]) {
    for (const items of sizes) {
      if (results.engines[engine]?.[`fanout-${items}`] === undefined) continue;
      lines.push(`| ${ENGINE_LABELS[engine]} | ${items} | ${cells(results, engine, items).join(" | ")} |`);
    }
  }
  return lines.join("\n");
}

/** The errors of the repeats that did not complete, so a "no" in the table says why. */
export function renderFanOutErrors(results: Results): string {
  const lines: string[] = [];
  for (const [engine, cases] of Object.entries(results.engines)) {
    for (const [name, runs] of Object.entries(cases)) {
      if (!name.startsWith("fanout-") || !Array.isArray(runs)) continue;
      for (const run of runs) if (run.completed !== 1 && run.error) lines.push(`- ${engine} ${name}: ${String(run.error)}`);
    }
  }
  return lines.join("\n");
}
