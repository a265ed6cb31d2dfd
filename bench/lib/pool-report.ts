// The Worker pool section of the tables: one row per engine that has the case (Shepherd), single figures the
// median over the repeats, latencies the percentile over every repeat's samples together.
import { median, percentile } from "../../scripts/lib/stats.ts";
import type { BenchOptions } from "./args.ts";
import type { EngineName } from "./engines/engine.ts";
import { ENGINE_LABELS, figures, formatNumber } from "./figures.ts";
import { POLL_MAX_TASKS, POLL_WAIT_MS, POOL_WORKERS } from "./pool.ts";
import type { Outcome, Results } from "./results.ts";

/** A column: a single figure's median (`key`), or the p50 of pooled `samples`, or worker p50 − http p50. */
type Column = { label: string } & ({ key: string; count?: boolean } | { samples: string } | { added: true });

const COLUMNS: Column[] = [
  { key: "completed", label: "completed", count: true },
  { key: "tasksPerSec", label: "tasks/s" },
  { key: "wallS", label: "wall (s)" },
  { key: "cpuMsPerStep", label: "CPU ms/step" },
  { key: "pollsPerTask", label: "polls/task" },
  { samples: "workerStep", label: "worker step p50 (ms)" },
  { samples: "httpStep", label: "http step p50 (ms)" },
  { added: true, label: "added per step (ms)" },
  { samples: "workerClaimed", label: "worker scheduled → claimed p50 (ms)" },
  { samples: "workerWorkflow", label: "5 worker steps start→completed p50 (ms)" },
  { samples: "httpWorkflow", label: "5 http steps start→completed p50 (ms)" },
];

export const POOL_NOTE = `W workflows of 5 sequential \`worker\` steps (default retry and timeouts), started as the throughput case starts
its workflows (at most \`--concurrency\` start requests in flight, 429/503 honoured), pulled by ${POOL_WORKERS} workers in the
bench process: each long-polls the pool (\`waitMs\` ${POLL_WAIT_MS}, \`max\` ${POLL_MAX_TASKS}), completes what it took at once with a small
output, and polls again. tasks/s: steps of completed workflows ÷ wall time (first start request → the last
completion stamp). CPU ms/step: workerd CPU from the first start until every workflow was read back, the
read-back discounted, ÷ steps; the workers' polls and reports are in it. polls/task: the workers' polls ÷ tasks
they took. Then \`--latency-runs\` pairs of single workflows, one at a time, the same workers polling: 5 worker
steps, and 5 http steps to the remote's \`/ok\`. A step's latency is its \`step_scheduled\` → \`step_succeeded\` in
the history (the workflow object's clock), p50 over all repeats; added per step = worker p50 − http p50;
scheduled → claimed is the worker step's wait for a poll (offered to the pool, a poll woken, its claim).
Shepherd only: Cloudflare Workflows has no pull model (a step is code in the instance; no worker of the user's
can take it), so it has no such case.`;

/** An engine's repeats of the case at W, or the error that ended it; undefined when it did not run it. */
function runsOf(results: Results, engine: EngineName, workflows: number): Outcome[] | { error: string } | undefined {
  return results.engines[engine]?.[`pool-${workflows}`];
}

function p50Of(runs: Outcome[], name: string): number | undefined {
  return percentile(runs.flatMap((run) => run.samples?.[name] ?? []), 50);
}

function columnValue(runs: Outcome[], column: Column): number | undefined {
  if ("key" in column) return median(figures(runs, column.key));
  if ("samples" in column) return p50Of(runs, column.samples);
  const worker = p50Of(runs, "workerStep");
  const http = p50Of(runs, "httpStep");
  return worker !== undefined && http !== undefined ? worker - http : undefined;
}

function cells(runs: Outcome[]): string[] {
  return COLUMNS.map((column) => {
    const value = columnValue(runs, column);
    if (value === undefined) return "n/a";
    return "key" in column && column.count ? value.toFixed(0) : formatNumber(value);
  });
}

/** The Worker pool table, empty when the run had no pool case. */
export function renderPoolTable(results: Results, options: Pick<BenchOptions, "cases" | "poolSize">): string {
  if (!options.cases.includes("pool")) return "";
  const lines = [
    `| Engine | W | ${COLUMNS.map((column) => column.label).join(" | ")} |`,
    `| --- | ---: | ${COLUMNS.map(() => "---:").join(" | ")} |`,
  ];
  for (const engine of Object.keys(results.engines) as EngineName[]) {
    const runs = runsOf(results, engine, options.poolSize);
    if (runs === undefined) continue;
    // The reason is listed under the tables with the other failed cases.
    const row = Array.isArray(runs) ? cells(runs) : COLUMNS.map((_, index) => (index === 0 ? "error" : "—"));
    lines.push(`| ${ENGINE_LABELS[engine]} | ${options.poolSize} | ${row.join(" | ")} |`);
  }
  return lines.join("\n");
}

/** What the workers met: polls that failed, reports refused, and the first error of each repeat that had one. */
export function renderPoolErrors(results: Results): string {
  const lines: string[] = [];
  for (const [engine, cases] of Object.entries(results.engines)) {
    for (const [name, runs] of Object.entries(cases)) {
      if (!name.startsWith("pool-") || !Array.isArray(runs)) continue;
      runs.forEach((run, index) => {
        if (run.workerError) lines.push(`- ${engine} ${name} repeat ${index + 1}: ${String(run.pollErrors)} poll errors, ${String(run.completeErrors)} reports refused; first: ${String(run.workerError)}`);
      });
    }
  }
  return lines.join("\n");
}
