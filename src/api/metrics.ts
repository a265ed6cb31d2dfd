import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { accepts } from "hono/accepts";
import { LATENESS_BOUNDS_MS, latenessQuantile, TIMEOUT_KINDS } from "../domain/machine/metrics";
import { WORKFLOW_STATUSES } from "../domain/machine/state";
import { tenantIndexDbs } from "../workflow-index/index-shards";
import { readTenantMetrics, type TenantMetrics } from "../workflow-index/metrics-rows";
import type { AppEnv } from "./app-env";
import { CountSchema, LatenessSchema, TimeoutCountsSchema } from "./metrics-shapes";
import { ApiError } from "./errors";
import { BEARER_AUTH, errorResponses } from "./openapi-helpers";
import { poolStats } from "../pools/pool-index";

const count = CountSchema;
const MetricsSchema = z
  .object({
    workflows: z.object({
      byStatus: z.record(z.enum(WORKFLOW_STATUSES), count).openapi({ description: "Every status, zeros included" }),
      started: count,
      ended: count.openapi({ description: "Workflows that have an end time (a redrive takes it away again)" }),
    }),
    steps: z.object({
      attempts: count.openapi({ description: "Attempts an agent began, actions and compensations" }),
      retries: count,
      timeouts: TimeoutCountsSchema,
    }),
    compensations: count,
    escalations: count,
    detectionLatenessMs: LatenessSchema
      .openapi({ description: "From a deadline to the supervisor's action on it; p50 and p99 are histogram bucket upper bounds (capped at max)" }),
    pools: z
      .array(z.object({ name: z.string(), pending: count, oldestPendingAgeMs: z.number().nullable() }))
      .openapi({ description: "Each worker pool's tasks waiting for a worker, and how long the oldest has waited" }),
    asOf: z.number().openapi({ description: "When the figures were read (epoch ms)" }),
  })
  .openapi("Metrics");

type PoolFigures = MetricsBody["pools"];

type MetricsBody = z.infer<typeof MetricsSchema>;

/** What Prometheus' text format is served as. */
const PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const metricsRoute = createRoute({
  method: "get",
  path: "/v1/metrics",
  operationId: "getMetrics",
  summary: "The tenant's figures, as JSON or (Accept: text/plain) in Prometheus' text format",
  description:
    "Summed from the workflow index: exact for ended workflows, and for open ones as of their last status change.",
  security: BEARER_AUTH,
  responses: {
    200: {
      content: { "application/json": { schema: MetricsSchema }, "text/plain": { schema: z.string() } },
      description: "The figures",
    },
    ...errorResponses(401, 503),
  },
});

export const metricsRoutes = new OpenAPIHono<AppEnv>().openapi(metricsRoute, async (c) => {
  const tenant = c.get("tenant");
  let figures: TenantMetrics;
  try {
    figures = await readTenantMetrics(tenantIndexDbs(c.env, tenant), tenant);
  } catch (error) {
    console.error(JSON.stringify({ message: "metrics could not be read", tenant, error: String(error) }));
    throw new ApiError(503, "unavailable", "The metrics could not be read; retry after a second.", undefined, { "Retry-After": "1" });
  }
  const pools = await poolFigures(c.env, tenant);
  const format = accepts(c, { header: "Accept", supports: ["application/json", "text/plain"], default: "application/json" });
  if (format === "text/plain") return c.text(prometheusText(figures) + poolText(pools), 200, { "Content-Type": PROMETHEUS_TYPE });
  return c.json({ ...metricsBody(figures, Date.now()), pools }, 200);
});

/** Each pool's pending tasks and oldest wait, from its object (the pools the tenant has are listed in D1). */
async function poolFigures(env: Env, tenant: string): Promise<PoolFigures> {
  const stats = await poolStats(env, tenant);
  return stats.map(({ name, pending, oldestPendingAgeMs }) => ({ name, pending, oldestPendingAgeMs }));
}

function metricsBody(figures: TenantMetrics, now: number): Omit<MetricsBody, "pools"> {
  const { byStatus, started, ended, totals } = figures;
  const { lateness } = totals;
  return {
    workflows: { byStatus, started, ended },
    steps: { attempts: totals.attempts, retries: totals.retries, timeouts: totals.timeouts },
    compensations: totals.compensations,
    escalations: totals.escalations,
    detectionLatenessMs: {
      count: lateness.count,
      p50: latenessQuantile(lateness, 0.5),
      p99: latenessQuantile(lateness, 0.99),
      max: lateness.count === 0 ? null : lateness.maxMs,
    },
    asOf: now,
  };
}

/** The pools' gauges, one sample per pool (a pool with nothing waiting reports an age of 0). */
function poolText(pools: PoolFigures): string {
  if (pools.length === 0) return "";
  const lines = [
    ...family("shepherd_pool_pending", "gauge", "Worker tasks waiting in each pool for a worker.", pools.map((pool) => ["", `{pool="${pool.name}"}`, pool.pending])),
    ...family("shepherd_pool_oldest_pending_age_ms", "gauge", "How long each pool's oldest waiting task has waited, in milliseconds.", pools.map((pool) => ["", `{pool="${pool.name}"}`, pool.oldestPendingAgeMs ?? 0])),
  ];
  return `${lines.join("\n")}\n`;
}

/** One metric family in the text exposition format: its HELP and TYPE lines, then its samples. */
function family(name: string, type: "counter" | "gauge" | "histogram", help: string, samples: [suffix: string, labels: string, value: number][]): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples.map(([suffix, labels, value]) => `${name}${suffix}${labels} ${value}`)];
}

/** Prometheus' text format, version 0.0.4; the tenant is the caller's, so no sample carries a tenant label. */
function prometheusText({ byStatus, started, ended, totals }: TenantMetrics): string {
  const { lateness } = totals;
  let cumulative = 0;
  const buckets = LATENESS_BOUNDS_MS.map((bound, i): [string, string, number] => {
    cumulative += lateness.buckets[i] ?? 0;
    return ["_bucket", `{le="${bound}"}`, cumulative];
  });
  const lines = [
    ...family("shepherd_workflows", "gauge", "Workflows by their current status.", WORKFLOW_STATUSES.map((status) => ["", `{status="${status}"}`, byStatus[status]])),
    ...family("shepherd_workflows_started_total", "counter", "Workflows started.", [["", "", started]]),
    ...family("shepherd_workflows_ended", "gauge", "Workflows that have ended (a redrive starts one again).", [["", "", ended]]),
    ...family("shepherd_step_attempts_total", "counter", "Step attempts an agent began (actions and compensations).", [["", "", totals.attempts]]),
    ...family("shepherd_step_retries_total", "counter", "Retries scheduled after a failure or a timeout.", [["", "", totals.retries]]),
    ...family("shepherd_step_timeouts_total", "counter", "Attempts ended by a deadline, by kind.", TIMEOUT_KINDS.map((kind) => ["", `{kind="${kind}"}`, totals.timeouts[kind]])),
    ...family("shepherd_compensations_total", "counter", "Steps whose compensation succeeded.", [["", "", totals.compensations]]),
    ...family("shepherd_escalations_total", "counter", "Times a workflow went to needs_attention.", [["", "", totals.escalations]]),
    ...family("shepherd_detection_lateness_ms", "histogram", "From a deadline to the supervisor's action on it, in milliseconds.", [
      ...buckets,
      ["_bucket", '{le="+Inf"}', lateness.count],
      ["_sum", "", lateness.sumMs],
      ["_count", "", lateness.count],
    ]),
    ...family("shepherd_detection_lateness_max_ms", "gauge", "The longest any deadline waited for the supervisor to act on it, in milliseconds.", [["", "", lateness.maxMs]]),
  ];
  return `${lines.join("\n")}\n`;
}
