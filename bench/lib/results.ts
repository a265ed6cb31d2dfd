// What a run records: per engine and case, the figures of each repeat (or the error that ended the case),
// and the run's circumstances. bench/results/*.json is this; the report and bench/capacity-sim.ts read it.
import type { BenchOptions } from "./args.ts";
import type { EngineName } from "./engines/engine.ts";
import type { ProfileFigures } from "./profiling.ts";

/** Raw samples by name: the report takes percentiles over all repeats' samples together. */
export type Samples = Record<string, number[]>;

/** A named figure: undefined (printed n/a) when the repeat could not measure it. */
export type Figure = number | string | null | undefined;

/** One repeat's figures of one case. */
export type Outcome = {
  [figure: string]: Figure | Samples | ProfileFigures;
  samples?: Samples;
  /** --profile: the profile's figures. */
  profile?: ProfileFigures;
  /** Other processes' CPU during the measurement, % of one core. */
  otherCpuPct?: number;
};

/** A case's repeats on one engine, or the error that ended it. */
export type CaseRecord = Outcome[] | { error: string };

export interface RunMeta {
  date: string;
  cores: number;
  cpuModel: string;
  memoryGb: number;
  versions: { node: string; wrangler: string; workerd: string };
  command: string;
  options: BenchOptions;
  shepherdSource?: string;
  durationMin?: number;
}

export interface Results {
  meta: RunMeta;
  engines: Partial<Record<EngineName, Record<string, CaseRecord>>>;
  /** An engine that could not start (or restart): the cases so far stay, the rest are missing. */
  error?: string;
}

/** A figure of a repeat, when it is a number. */
export function numberOf(outcome: Outcome, key: string): number | undefined {
  const value = outcome[key];
  return typeof value === "number" ? value : undefined;
}
