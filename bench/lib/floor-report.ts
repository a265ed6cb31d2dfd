// The floor's section of the tables: Shepherd and Workflows against the least a durable step can cost on this runtime
// (bench/floor), in steps/s and workerd CPU per step, at every W the run measured the floor at (the throughput case's
// and the burst's). The ratio to the floor is the honest measure of an engine's overhead.
import { median } from "../../scripts/lib/stats.ts";
import type { BenchOptions } from "./args.ts";
import type { EngineName } from "./engines/engine.ts";
import { figures, formatNumber } from "./figures.ts";
import type { Results } from "./results.ts";

type FloorOptions = Pick<BenchOptions, "throughputSizes" | "burstSizes" | "cases">;

/** The goal: Shepherd's CPU per step at most this many times the floor's, at W = GOAL_W. */
export const CPU_GOAL = 1.3;
const GOAL_W = 1000;

const FIGURES = [
  { key: "stepsPerSec", label: "steps/s" },
  { key: "cpuMsPerStep", label: "workerd CPU ms/step" },
] as const;

/** The measurements of many workflows at once: each throughput W, then each burst W. */
function measurements(options: FloorOptions): Array<{ name: string; label: string; workflows: number }> {
  const throughput = options.cases.includes("throughput") ? options.throughputSizes.map((w) => ({ name: `throughput-${w}`, label: `Throughput W=${w}`, workflows: w })) : [];
  const burst = options.cases.includes("burst") ? options.burstSizes.map((w) => ({ name: `burst-${w}`, label: `Burst W=${w}`, workflows: w })) : [];
  return [...throughput, ...burst];
}

/** The median of one figure over an engine's repeats of a case. */
export function medianFigure(results: Results, engine: EngineName, name: string, key: string): number | undefined {
  return median(figures(results.engines[engine]?.[name], key));
}

const text = (value: number | undefined): string => (value === undefined ? "—" : formatNumber(value));
const ratio = (a: number | undefined, b: number | undefined): number | undefined => (a !== undefined && b !== undefined && b !== 0 ? a / b : undefined);

/** The section's table, and the goal's verdict for each W = 1 000 measurement; "" without floor figures. */
export function renderFloorTable(results: Results, options: FloorOptions): string {
  const lines = ["| Measurement | Shepherd | Workflows | Floor | Shepherd ÷ floor | Workflows ÷ floor |", "| --- | ---: | ---: | ---: | ---: | ---: |"];
  const verdicts: string[] = [];
  for (const measurement of measurements(options)) {
    if (!Array.isArray(results.engines.floor?.[measurement.name])) continue;
    for (const { key, label } of FIGURES) {
      const [shepherd, workflows, floor] = (["shepherd", "workflows", "floor"] as const).map((engine) => medianFigure(results, engine, measurement.name, key));
      lines.push(`| ${measurement.label}: ${label} | ${text(shepherd)} | ${text(workflows)} | ${text(floor)} | ${text(ratio(shepherd, floor))} | ${text(ratio(workflows, floor))} |`);
      const cpuRatio = ratio(shepherd, floor);
      if (key === "cpuMsPerStep" && measurement.workflows === GOAL_W && cpuRatio !== undefined) {
        verdicts.push(`${measurement.label}: Shepherd's CPU per step is ${formatNumber(cpuRatio)}× the floor's, ${cpuRatio <= CPU_GOAL ? "within" : "over"} the goal of ${CPU_GOAL}×.`);
      }
    }
  }
  if (lines.length === 2) return "";
  return [lines.join("\n"), ...(verdicts.length > 0 ? ["", ...verdicts] : [])].join("\n");
}

export const FLOOR_NOTE = `The floor (\`bench/floor\`, \`--engines floor\`) is the smallest correct durable engine on this runtime:
one Durable Object per workflow whose alarm runs the steps in order, each a POST to the same remote over \`fetch\`,
each answer one SQLite row committed before the next step is sent; no queue, no history, no index, no supervisor.
It runs the throughput and burst cases exactly as the other two engines do. An engine's ratio to it is its
overhead on this runtime; Shepherd's goal is at most ${CPU_GOAL}× the floor's CPU per step at W = 1 000.`;
