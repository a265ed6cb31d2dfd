// Workflows by outcome over time. GET /v1/metrics gives totals only, so the series is counted from the
// workflow list: an ended workflow's updatedAt is its last status change, i.e. when it ended.
import { isTerminal, OUTCOMES } from "../statuses.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The windows an operator can pick, each with a bucket size that gives it 7 to 24 bars. */
export const WINDOWS = {
  "15m": { label: "15 min", spanMs: 15 * MINUTE, bucketMs: MINUTE, bucketWord: "minute" },
  "1h": { label: "1 hour", spanMs: HOUR, bucketMs: 5 * MINUTE, bucketWord: "5 minutes" },
  "24h": { label: "24 hours", spanMs: DAY, bucketMs: HOUR, bucketWord: "hour" },
  "7d": { label: "7 days", spanMs: 7 * DAY, bucketMs: DAY, bucketWord: "day" },
};
export const DEFAULT_WINDOW = "1h";

/** The series, bottom to top: how a workflow ended. */
export const OUTCOME_SERIES = OUTCOMES.map((key) => ({ key, label: key }));

/**
 * Buckets of the time window `span` ending with the one that holds `now`, aligned to local clock boundaries (whole minutes,
 * hours, days), each counting the listed workflows that ended in it by status.
 */
export function bucketOutcomes(workflows, span, now) {
  const { bucketMs } = span;
  const end = floorLocal(now, bucketMs) + bucketMs;
  const count = Math.round(span.spanMs / bucketMs);
  const start = end - count * bucketMs;
  const buckets = Array.from({ length: count }, (_, i) => ({ start: start + i * bucketMs, end: start + (i + 1) * bucketMs, values: {} }));
  for (const workflow of workflows) {
    if (!isTerminal(workflow.status) || workflow.updatedAt < start || workflow.updatedAt >= end) continue;
    const values = buckets[Math.floor((workflow.updatedAt - start) / bucketMs)].values;
    values[workflow.status] = (values[workflow.status] ?? 0) + 1;
  }
  return buckets;
}

/** Floors to a multiple of `size` in local time, so day buckets start at local midnight. */
function floorLocal(ms, size) {
  const offset = new Date(ms).getTimezoneOffset() * MINUTE;
  return Math.floor((ms - offset) / size) * size + offset;
}

/** "12:05" within a day, "Nov 24" for day buckets. */
export function bucketLabel(span) {
  return (ms) =>
    span.bucketMs >= DAY
      ? new Date(ms).toLocaleDateString([], { month: "short", day: "numeric" })
      : new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hour12: false });
}
