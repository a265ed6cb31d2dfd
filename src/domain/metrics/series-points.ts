/**
 * The points of `GET /v1/metrics/series`: what a tenant's minutes add up to over each step, every step of the range
 * present (zeros where nothing happened), and their total. Pure: the minutes come summed per step from D1.
 */
import type { WorkflowStatus } from "../contract";
import { emptyLateness, emptyMetrics, latenessQuantile, type LatenessHistogram, type WorkflowMetrics } from "../machine/metrics";
import type { SeriesRange } from "./series-range";

/** How a workflow ended: TERMINAL_WORKFLOW_STATUSES, each a column of the series. */
export const OUTCOMES = ["completed", "failed", "compensated", "cancelled", "terminated"] as const satisfies readonly WorkflowStatus[];
export type Outcome = (typeof OUTCOMES)[number];

/** What some minutes of a tenant add up to. */
export interface SeriesCounts {
  started: number;
  ended: Record<Outcome, number>;
  figures: WorkflowMetrics & { lateness: LatenessHistogram };
}

export function emptyCounts(): SeriesCounts {
  return {
    started: 0,
    ended: Object.fromEntries(OUTCOMES.map((outcome) => [outcome, 0])) as Record<Outcome, number>,
    figures: { ...emptyMetrics(), lateness: emptyLateness() },
  };
}

/** `into` plus `more`, in place: every count adds up, and the largest lateness is the larger of the two. */
export function addCounts(into: SeriesCounts, more: SeriesCounts): SeriesCounts {
  into.started += more.started;
  for (const outcome of OUTCOMES) into.ended[outcome] += more.ended[outcome];
  const [a, b] = [into.figures, more.figures];
  a.attempts += b.attempts;
  a.retries += b.retries;
  for (const kind of Object.keys(a.timeouts) as (keyof WorkflowMetrics["timeouts"])[]) a.timeouts[kind] += b.timeouts[kind];
  a.compensations += b.compensations;
  a.escalations += b.escalations;
  a.lateness.buckets = a.lateness.buckets.map((n, i) => n + (b.lateness.buckets[i] ?? 0));
  a.lateness.count += b.lateness.count;
  a.lateness.sumMs += b.lateness.sumMs;
  a.lateness.maxMs = Math.max(a.lateness.maxMs, b.lateness.maxMs);
  return into;
}

/** One step of the series as the API answers it. */
export interface SeriesPoint {
  /** The step's start (epoch ms); it covers the minutes up to `at + stepMs`. */
  at: number;
  started: number;
  completed: number;
  failed: number;
  compensated: number;
  cancelled: number;
  terminated: number;
  attempts: number;
  retries: number;
  timeouts: WorkflowMetrics["timeouts"];
  compensations: number;
  escalations: number;
  detectionLatenessMs: { count: number; p50: number | null; p99: number | null; max: number | null };
  /** The task queues' worst lag sampled in the step; null when none was. */
  queueLagMs: number | null;
}

export type SeriesTotal = Omit<SeriesPoint, "at">;

export interface Series {
  from: number;
  to: number;
  stepMs: number;
  series: SeriesPoint[];
  /** The whole range as one step. */
  total: SeriesTotal;
}

/**
 * Every step of `range`, in order: the tenant's counts of step k are `counts.get(k)` and the queue's worst lag
 * `lags.get(k)`, a step with neither being all zeros (and no lag).
 */
export function seriesOf(range: SeriesRange, counts: Map<number, SeriesCounts>, lags: Map<number, number>): Series {
  const series: SeriesPoint[] = [];
  const total = emptyCounts();
  let worstLag: number | null = null;
  for (let k = 0; k < range.points; k++) {
    const step = counts.get(k) ?? emptyCounts();
    const lag = lags.get(k) ?? null;
    series.push({ at: range.from + k * range.stepMs, ...totalOf(step, lag) });
    addCounts(total, step);
    if (lag !== null) worstLag = Math.max(worstLag ?? 0, lag);
  }
  return { from: range.from, to: range.to, stepMs: range.stepMs, series, total: totalOf(total, worstLag) };
}

/** The API's shape of some counts: lateness percentiles are bucket upper bounds, at most the max (as GET /v1/metrics). */
function totalOf({ started, ended, figures }: SeriesCounts, queueLagMs: number | null): SeriesTotal {
  const { lateness } = figures;
  return {
    started,
    ...ended,
    attempts: figures.attempts,
    retries: figures.retries,
    timeouts: { ...figures.timeouts },
    compensations: figures.compensations,
    escalations: figures.escalations,
    detectionLatenessMs: {
      count: lateness.count,
      p50: latenessQuantile(lateness, 0.5),
      p99: latenessQuantile(lateness, 0.99),
      max: lateness.count === 0 ? null : lateness.maxMs,
    },
    queueLagMs,
  };
}
