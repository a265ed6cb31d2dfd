import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { readLagSteps } from "../admission/queue-lag-minutes";
import {
  METRICS_SERIES_DEFAULT_SPAN_MS,
  METRICS_SERIES_MAX_POINTS,
  METRICS_SERIES_MAX_STEP_MS,
  METRICS_SERIES_MINUTE_MS,
  METRICS_SERIES_RETENTION_MS,
} from "../domain/contract";
import { seriesOf, type Series } from "../domain/metrics/series-points";
import { seriesRange, type SeriesRange } from "../domain/metrics/series-range";
import { tenantIndexDbs } from "../workflow-index/index-shards";
import { readTenantSeries } from "../workflow-index/metrics-series";
import type { AppEnv } from "./app-env";
import { CountSchema, LatenessSchema, TimeoutCountsSchema } from "./metrics-shapes";
import { ApiError, validationFailed } from "./errors";
import { instantQuery } from "./instant-query";
import { BEARER_AUTH, errorResponses, jsonContent } from "./openapi-helpers";

const SeriesQuerySchema = z.strictObject({
  from: instantQuery("Where the series starts, taken back to its minute: epoch ms or ISO 8601 (default an hour before `to`)"),
  to: instantQuery("Where it ends (exclusive; the last step ends at or after it): epoch ms or ISO 8601 (default now)"),
  stepMs: z.coerce
    .number({ error: `must be a number of milliseconds, a multiple of ${METRICS_SERIES_MINUTE_MS}` })
    .int({ error: `must be a whole number of minutes in milliseconds (a multiple of ${METRICS_SERIES_MINUTE_MS})` })
    .min(METRICS_SERIES_MINUTE_MS, { error: `must be at least ${METRICS_SERIES_MINUTE_MS} (a minute)` })
    .max(METRICS_SERIES_MAX_STEP_MS, { error: `must be at most ${METRICS_SERIES_MAX_STEP_MS} (a day)` })
    .multipleOf(METRICS_SERIES_MINUTE_MS, { error: `must be a whole number of minutes (a multiple of ${METRICS_SERIES_MINUTE_MS})` })
    .optional()
    .openapi({ description: `Each point's width: whole minutes, at most a day (default ${METRICS_SERIES_MINUTE_MS})`, example: 300_000, multipleOf: METRICS_SERIES_MINUTE_MS }),
});

const count = CountSchema;
const SeriesTotalSchema = z.object({
  started: count.openapi({ description: "Workflows whose first index entry was written" }),
  completed: count,
  failed: count,
  compensated: count,
  cancelled: count,
  terminated: count,
  attempts: count.openapi({ description: "Attempts an agent began, actions and compensations" }),
  retries: count,
  timeouts: TimeoutCountsSchema,
  compensations: count,
  escalations: count,
  detectionLatenessMs: LatenessSchema
    .openapi({ description: "From a deadline to the supervisor's action on it; bucket upper bounds, as in GET /v1/metrics" }),
  queueLagMs: z.number().nullable().openapi({ description: "The task queues' worst lag sampled (shared by every tenant); null when none was" }),
});
const SeriesSchema = z
  .object({
    from: z.number().openapi({ description: "The first point's start (epoch ms, a whole minute)" }),
    to: z.number().openapi({ description: "The last point's end (epoch ms)" }),
    stepMs: z.number(),
    series: z
      .array(SeriesTotalSchema.extend({ at: z.number().openapi({ description: "The point's start; it covers up to at + stepMs" }) }).openapi("MetricsPoint"))
      .openapi({ description: "Every step from `from` to `to`, oldest first; a step in which nothing happened is all zeros" }),
    total: SeriesTotalSchema.openapi({ description: "The whole range as one point" }),
  })
  .openapi("MetricsSeries");

const seriesRoute = createRoute({
  method: "get",
  path: "/v1/metrics/series",
  operationId: "getMetricsSeries",
  summary: "The tenant's figures over time: workflows started and ended by outcome, attempts, retries, timeouts, detection lateness and the queues' lag, per step",
  description:
    `Kept by the service per minute for ${METRICS_SERIES_RETENTION_MS / 86_400_000} days, as each workflow's index entry is written (when it starts, ` +
    `changes status or renews its lease), so a long run's attempts count in the minute of its next entry. At most ${METRICS_SERIES_MAX_POINTS} points; ` +
    `without from and to, the last ${METRICS_SERIES_DEFAULT_SPAN_MS / 60_000} minutes.`,
  security: BEARER_AUTH,
  request: { query: SeriesQuerySchema },
  responses: { 200: jsonContent(SeriesSchema, "One point per step, gaps filled with zeros"), ...errorResponses(400, 401, 503) },
});

export const metricsSeriesRoutes = new OpenAPIHono<AppEnv>().openapi(seriesRoute, async (c) => {
  const result = seriesRange(c.req.valid("query"), Date.now());
  if (!result.ok) throw validationFailed(result.issues);
  return c.json(await readSeries(c.env, c.get("tenant"), result.range), 200);
});

/** The tenant's steps from its index shards and the queues' lag from DB, side by side. */
async function readSeries(env: Env, tenant: string, range: SeriesRange): Promise<Series> {
  try {
    const [counts, lags] = await Promise.all([readTenantSeries(tenantIndexDbs(env, tenant), tenant, range), readLagSteps(env.DB, range)]);
    return seriesOf(range, counts, lags);
  } catch (error) {
    console.error(JSON.stringify({ message: "metrics series could not be read", tenant, error: String(error) }));
    throw new ApiError(503, "unavailable", "The metrics series could not be read; retry after a second.", undefined, { "Retry-After": "1" });
  }
}
