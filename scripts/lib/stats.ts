// Statistics of the tools' samples: nearest-rank percentiles (a value that was observed, never an
// interpolation between two), the median, and the summary the chaos report prints.

/** Percentile by nearest rank (p in 0..100) of the finite numbers; undefined for none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export const median = (values: readonly number[]): number | undefined => percentile(values, 50);

/** A sample in brief; the figures are null when it had no finite number. */
export interface Summary {
  n: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
  mean: number | null;
}

/** { n, p50, p99, max, mean } of the finite numbers (mean to two decimals); null fields when there are none. */
export function summarize(values: readonly number[]): Summary {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return { n: 0, p50: null, p99: null, max: null, mean: null };
  const mean = finite.reduce((sum, v) => sum + v, 0) / finite.length;
  // Never undefined here: there is at least one finite number.
  const at = (p: number): number | null => percentile(finite, p) ?? null;
  return { n: finite.length, p50: at(50), p99: at(99), max: at(100), mean: Math.round(mean * 100) / 100 };
}
