// The metrics page's time windows, and the series (GET /v1/metrics/series) as the charts' buckets.
import { METRICS_SERIES_MINUTE_MS } from "../generated/contract.js";
import { OUTCOMES } from "../statuses.js";

const MINUTE = METRICS_SERIES_MINUTE_MS;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The windows an operator can pick, each with a step that gives it 7 to 24 bars. */
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
 * The series to ask for: the window's steps ending with the one that holds `now`, aligned to local clock boundaries
 * (whole minutes, hours, days), so day bars start at local midnight.
 */
export function windowRange(span, now) {
  const { bucketMs } = span;
  const to = floorLocal(now, bucketMs) + bucketMs;
  return { from: to - Math.round(span.spanMs / bucketMs) * bucketMs, to, stepMs: bucketMs };
}

/** The series' points as bars: `pick(point)` gives a bar's values by series key. */
export function bucketsOf(series, pick) {
  return series.series.map((point) => ({ start: point.at, end: point.at + series.stepMs, values: pick(point) }));
}

/** A point's ends, by outcome. */
export const outcomesOf = (point) => Object.fromEntries(OUTCOMES.map((outcome) => [outcome, point[outcome]]));

/** Floors to a multiple of `size` in local time. */
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
