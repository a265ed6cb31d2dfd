/**
 * A workflow's own figures for `GET /v1/metrics`, counted from the history entries its transitions append and
 * kept in its state. They only grow, so its index entry carries them as absolute counters: a repeated or late
 * index write sets the same or an older figure, never adds it twice, and the index sums them per tenant.
 */
import { z } from "zod";

/** Why an attempt's deadline passed: the three timeouts of its policy, or progress that stopped changing. */
export const TIMEOUT_KINDS = ["heartbeat", "start_to_close", "schedule_to_start", "stalled"] as const;

/**
 * Upper bounds (ms, inclusive) of the detection-lateness buckets; one more bucket holds everything above the
 * last (+Inf). Fixed, so histograms of different workflows add up bucket by bucket.
 */
export const LATENESS_BOUNDS_MS = [10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000] as const;

export const LatenessHistogramSchema = z.object({
  /** Observations per bucket, not cumulative: one count per bound of LATENESS_BOUNDS_MS, then the +Inf one. */
  buckets: z.array(z.number()),
  count: z.number(),
  sumMs: z.number(),
  maxMs: z.number(),
});

export const WorkflowMetricsSchema = z.object({
  /** Attempts an agent actually began (action and compensation alike). */
  attempts: z.number(),
  /** Retries scheduled after a failure or a timeout. */
  retries: z.number(),
  timeouts: z.object({ heartbeat: z.number(), start_to_close: z.number(), schedule_to_start: z.number(), stalled: z.number() }),
  /** Steps whose compensation succeeded. */
  compensations: z.number(),
  /** Times the workflow went to needs_attention. */
  escalations: z.number(),
  /** How long after a deadline the supervisor acted on it; absent until something was overdue. */
  lateness: LatenessHistogramSchema.optional(),
});

export type LatenessHistogram = z.infer<typeof LatenessHistogramSchema>;
export type WorkflowMetrics = z.infer<typeof WorkflowMetricsSchema>;

/**
 * A history entry as far as counting goes. Structural rather than history.ts's union: that module imports the
 * state's types, and the state imports this schema (test/domain/metrics.test.ts types its rows as the union).
 */
export interface CountableEntry {
  type: string;
  data?: Record<string, unknown>;
}

export function emptyMetrics(): WorkflowMetrics {
  return { attempts: 0, retries: 0, timeouts: { heartbeat: 0, start_to_close: 0, schedule_to_start: 0, stalled: 0 }, compensations: 0, escalations: 0 };
}

export function emptyLateness(): LatenessHistogram {
  return { buckets: new Array<number>(LATENESS_BOUNDS_MS.length + 1).fill(0), count: 0, sumMs: 0, maxMs: 0 };
}

/**
 * Adds what one transition's entries count to `metrics`, in place; creates the counters on the first entry
 * that counts and returns them (undefined while nothing ever counted). Runs on every transition, so it
 * allocates nothing for an entry that does not count.
 */
export function countHistory(metrics: WorkflowMetrics | undefined, entries: readonly CountableEntry[]): WorkflowMetrics | undefined {
  let counted = metrics;
  for (const entry of entries) {
    const overdueMs = entry.data?.overdueMs;
    const late = typeof overdueMs === "number";
    if (!late && !COUNTED_TYPES.has(entry.type)) continue;
    counted ??= emptyMetrics();
    countEntry(counted, entry);
    if (late) observeLateness(counted, overdueMs);
  }
  return counted;
}

const COUNTED_TYPES: ReadonlySet<string> = new Set([
  "step_started",
  "step_retry_scheduled",
  "step_timed_out",
  "step_heartbeat_missed",
  "step_stalled",
  "step_compensated",
  "workflow_escalated",
]);

/*
 * Attempts are counted at `step_started` (an agent's claim), not at `step_scheduled`: an attempt that timed out
 * in the queue (schedule-to-start) or was fenced before any agent took it never reached the remote, and counting
 * it would read as work done, and as load on the remote, that never happened.
 */
function countEntry(metrics: WorkflowMetrics, entry: CountableEntry): void {
  switch (entry.type) {
    case "step_started":
      metrics.attempts += 1;
      return;
    case "step_retry_scheduled":
      metrics.retries += 1;
      return;
    case "step_timed_out":
    case "step_heartbeat_missed": {
      const kind = entry.data?.timeout;
      if (kind === "heartbeat" || kind === "start_to_close" || kind === "schedule_to_start") metrics.timeouts[kind] += 1;
      return;
    }
    case "step_stalled":
      metrics.timeouts.stalled += 1;
      return;
    case "step_compensated":
      metrics.compensations += 1;
      return;
    case "workflow_escalated":
      metrics.escalations += 1;
      return;
  }
}

/** Records one detection: how long past its deadline the supervisor acted. */
export function observeLateness(metrics: WorkflowMetrics, overdueMs: number): void {
  const ms = Number.isFinite(overdueMs) ? Math.max(0, overdueMs) : 0;
  const lateness = (metrics.lateness ??= emptyLateness());
  const bucket = bucketOf(ms);
  lateness.buckets[bucket] = (lateness.buckets[bucket] ?? 0) + 1;
  lateness.count += 1;
  lateness.sumMs += ms;
  if (ms > lateness.maxMs) lateness.maxMs = ms;
}

function bucketOf(ms: number): number {
  const index = LATENESS_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return index === -1 ? LATENESS_BOUNDS_MS.length : index;
}

/**
 * The q-quantile (0 < q ≤ 1) of a histogram, as an upper bound: the upper bound of the bucket that holds the
 * observation of rank ⌈q·count⌉, or the largest observation when that is smaller (the +Inf bucket has no
 * bound of its own). Null for an empty histogram.
 */
export function latenessQuantile(histogram: LatenessHistogram, q: number): number | null {
  if (histogram.count === 0) return null;
  const rank = Math.max(1, Math.ceil(q * histogram.count));
  let seen = 0;
  for (const [index, n] of histogram.buckets.entries()) {
    seen += n;
    if (seen >= rank) return Math.min(LATENESS_BOUNDS_MS[index] ?? Infinity, histogram.maxMs);
  }
  return histogram.maxMs;
}
