// Reading the figures back out of a run's results for the tables: one figure of every repeat, and how a
// number is printed. Shared by report.ts and the sections it includes (fan-out-report.ts).
import type { EngineName } from "./engines/engine.ts";
import { numberOf } from "./results.ts";
import type { CaseRecord } from "./results.ts";

/** One figure of every repeat that has it. */
export function figures(runs: CaseRecord | undefined, key: string): number[] {
  if (!Array.isArray(runs)) return [];
  return runs.map((run) => numberOf(run, key)).filter((value) => value !== undefined);
}

/** Three significant digits or so: 1234, 12.3, 1.23. */
export function formatNumber(value: number): string {
  const magnitude = Math.abs(value);
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

export const ENGINE_LABELS: Record<EngineName, string> = { shepherd: "Shepherd", workflows: "Workflows", floor: "Floor" };
