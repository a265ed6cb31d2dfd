/**
 * Which points `GET /v1/metrics/series` answers: the range asked for, cut into steps of whole minutes (the series is
 * kept per minute), with the contract's bounds. Pure: the caller hands in `now`.
 */
import {
  METRICS_SERIES_DEFAULT_SPAN_MS,
  METRICS_SERIES_MAX_POINTS,
  METRICS_SERIES_MAX_STEP_MS,
  METRICS_SERIES_MINUTE_MS,
} from "../contract";
import { parseInstant } from "../instant";

export interface SeriesQuery {
  from?: string | undefined;
  to?: string | undefined;
  stepMs?: number | undefined;
}

/** Points `stepMs` apart from `from` (a whole minute) to `to` (exclusive), `points` of them. */
export interface SeriesRange {
  from: number;
  to: number;
  stepMs: number;
  points: number;
}

export interface RangeIssue {
  path: ["from" | "to" | "stepMs"];
  code: "custom";
  message: string;
}

export type RangeResult = { ok: true; range: SeriesRange } | { ok: false; issues: RangeIssue[] };

const issue = (field: RangeIssue["path"][0], message: string): RangeResult => ({ ok: false, issues: [{ path: [field], code: "custom", message }] });

const startOfMinute = (ms: number) => Math.floor(ms / METRICS_SERIES_MINUTE_MS) * METRICS_SERIES_MINUTE_MS;
const endOfMinute = (ms: number) => Math.ceil(ms / METRICS_SERIES_MINUTE_MS) * METRICS_SERIES_MINUTE_MS;

/**
 * The range to answer. `to` defaults to now and `from` to `METRICS_SERIES_DEFAULT_SPAN_MS` before the end of `to`'s
 * minute (an hour is 60 points, the last one now's minute); `from` is taken back to its minute's start, and the last
 * step ends at or after `to`, so every point covers whole minutes.
 * `stepMs` (default a minute) is checked by the route's schema: whole minutes, at most a day.
 */
export function seriesRange(query: SeriesQuery, now: number): RangeResult {
  const to = query.to === undefined ? now : parseInstant(query.to);
  if (to === undefined) return issue("to", "is not a date: give epoch milliseconds or an ISO 8601 date-time such as 2024-05-01T12:00:00Z");
  const from = query.from === undefined ? endOfMinute(to) - METRICS_SERIES_DEFAULT_SPAN_MS : parseInstant(query.from);
  if (from === undefined) return issue("from", "is not a date: give epoch milliseconds or an ISO 8601 date-time such as 2024-05-01T12:00:00Z");
  const stepMs = query.stepMs ?? METRICS_SERIES_MINUTE_MS;
  if (stepMs % METRICS_SERIES_MINUTE_MS !== 0 || stepMs < METRICS_SERIES_MINUTE_MS || stepMs > METRICS_SERIES_MAX_STEP_MS) {
    return issue("stepMs", `must be a whole number of minutes (a multiple of ${METRICS_SERIES_MINUTE_MS}) from ${METRICS_SERIES_MINUTE_MS} to ${METRICS_SERIES_MAX_STEP_MS}`);
  }
  const start = Math.max(0, startOfMinute(from));
  if (to <= start) return issue("to", `must be after from (${new Date(start).toISOString()})`);
  const points = Math.ceil((to - start) / stepMs);
  if (points > METRICS_SERIES_MAX_POINTS) {
    const fewest = Math.ceil((to - start) / METRICS_SERIES_MAX_POINTS / METRICS_SERIES_MINUTE_MS) * METRICS_SERIES_MINUTE_MS;
    const remedy = fewest <= METRICS_SERIES_MAX_STEP_MS ? `use a stepMs of at least ${fewest}, or a shorter range` : "ask for a shorter range";
    const span = `from ${new Date(start).toISOString()} to ${new Date(to).toISOString()}`;
    return issue("stepMs", `must give at most ${METRICS_SERIES_MAX_POINTS} points, and ${stepMs} gives ${points} ${span}: ${remedy}`);
  }
  return { ok: true, range: { from: start, to: start + points * stepMs, stepMs, points } };
}
