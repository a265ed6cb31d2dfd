// Reading the bill and rows cases back out of a run's results: one engine's counts per step for a shape, what its
// Durable Object requests called, and its rows written per workflow by statement. Medians over the repeats that
// have them (the cases run once unless asked).
import { median } from "../../../scripts/lib/stats.ts";
import type { EngineName } from "../engines/engine.ts";
import { figures } from "../figures.ts";
import type { Results } from "../results.ts";
import type { ShapeName } from "./bill-case.ts";
import type { StepCounts } from "./model.ts";

const COUNT_KEYS = ["workerRequests", "doRequests", "doActiveMs", "sqliteRowsRead", "sqliteRowsWritten", "d1RowsRead", "d1RowsWritten", "queueSends", "cpuMs", "workflowInvocations"] as const satisfies ReadonlyArray<keyof StepCounts>;

/** The keys of an engine's figures of one case, across its repeats. */
function keysOf(results: Results, engine: EngineName, caseName: string): string[] {
  const runs = results.engines[engine]?.[caseName];
  return Array.isArray(runs) ? [...new Set(runs.flatMap((run) => Object.keys(run)))] : [];
}

const figure = (results: Results, engine: EngineName, caseName: string, key: string): number | undefined => median(figures(results.engines[engine]?.[caseName], key));

/** An engine's counts per step for one shape; undefined when the bill case did not measure it. */
export function stepCounts(results: Results, engine: EngineName, shape: ShapeName): StepCounts | undefined {
  if (figure(results, engine, "bill", `${shape}.steps`) === undefined) return undefined;
  const counts = Object.fromEntries(COUNT_KEYS.map((key) => [key, figure(results, engine, "bill", `${shape}.${key}`) ?? 0]));
  return counts as unknown as StepCounts;
}

/** What an engine's Durable Object requests called per step for one shape, most first. */
export function objectRequestsBy(results: Results, engine: EngineName, shape: ShapeName): Array<[string, number]> {
  const prefix = `${shape}.doRequests.`;
  return keysOf(results, engine, "bill")
    .filter((key) => key.startsWith(prefix))
    .map((key): [string, number] => [key.slice(prefix.length), figure(results, engine, "bill", key) ?? 0])
    .sort((a, b) => b[1] - a[1]);
}

/** Rows written per workflow of `steps` steps, by statement, and the total; undefined when not measured. */
export function rowsPerWorkflow(results: Results, engine: EngineName, steps: number): { total: number; traceCoverage?: number; rows: Map<string, number>; statements: Map<string, number> } | undefined {
  const total = figure(results, engine, "rows", `${steps}.total`);
  if (total === undefined) return undefined;
  const read = (kind: "rows" | "statements"): Map<string, number> => {
    const prefix = `${steps}.${kind}|`;
    const keys = keysOf(results, engine, "rows").filter((key) => key.startsWith(prefix));
    return new Map(keys.map((key) => [key.slice(prefix.length), figure(results, engine, "rows", key) ?? 0]));
  };
  return { total, traceCoverage: figure(results, engine, "rows", `${steps}.traceCoverage`), rows: read("rows"), statements: read("statements") };
}
