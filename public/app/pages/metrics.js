// A few charts of the tenant's figures: workflows by outcome over time, attempts/retries/timeouts and how late the
// supervisor acted on deadlines in the window, and the task queues' lag over time. All but the all-time figures come
// from the series the service keeps (GET /v1/metrics/series). Drawn by hand as SVG (public/app/charts), no chart library.
import { clock, duration } from "../format.js";
import { html } from "../html.js";
import { useLive } from "../live.js";
import { href } from "../router.js";
import { HBars } from "../charts/hbars.js";
import { loadMetrics } from "../charts/metrics-data.js";
import { bucketLabel, bucketsOf, DEFAULT_WINDOW, OUTCOME_SERIES, outcomesOf, WINDOWS } from "../charts/outcome-series.js";
import { StackedBars } from "../charts/stacked-bars.js";
import { METRICS_SERIES_RETENTION_MS } from "../generated/contract.js";
import { OUTCOMES } from "../statuses.js";

const REFRESH_MS = 5_000;
/** The contract's promise: a missed deadline is acted on within 1 s. */
const PROMISE_MS = 1_000;
const RETENTION_DAYS = METRICS_SERIES_RETENTION_MS / 86_400_000;

const openWorkflows = (figures) => Object.entries(figures.workflows.byStatus).reduce((sum, [status, n]) => (OUTCOMES.includes(status) ? sum : sum + n), 0);

export function MetricsPage({ route }) {
  const key = WINDOWS[route.search.get("window")] ? route.search.get("window") : DEFAULT_WINDOW;
  const { data, error, loading } = useLive(() => loadMetrics(WINDOWS[key]), [key], { active: (d) => d !== undefined && openWorkflows(d.figures) > 0, everyMs: REFRESH_MS });
  return html`
    <div class="list-head">
      <h1>Metrics</h1>
      ${data && html`<span class="muted live-note">as of ${clock(data.loadedAt)}</span>`}
    </div>
    ${error && html`<p class="error" role="alert">${error.message}</p>`}
    ${!data && loading && html`<p class="muted">Loading metrics…</p>`}
    ${data && html`
      <${Figures} figures=${data.figures} />
      <${OutcomesPanel} series=${data.series} windowKey=${key} />
      <div class="chart-row">
        <${RetriesPanel} total=${data.series.total} span=${WINDOWS[key]} />
        <${LatenessPanel} lateness=${data.series.total.detectionLatenessMs} span=${WINDOWS[key]} />
      </div>
      <${QueueLagPanel} series=${data.series} span=${WINDOWS[key]} />`}
  `;
}

function Figures({ figures }) {
  const { workflows, steps } = figures;
  const items = [
    ["Started", workflows.started],
    ["Open", openWorkflows(figures)],
    ["Ended", workflows.ended],
    ["Needs attention", workflows.byStatus.needs_attention],
    ["Step attempts", steps.attempts],
    ["Retries", steps.retries],
  ];
  return html`
    <dl class="figures" data-testid="all-time-figures">${items.map(([label, value]) => html`<div key=${label}><dt>${label}</dt><dd>${value}</dd></div>`)}</dl>
    <p class="caption figures-caption">All time, over the tenant's workflows; the panels below cover the window picked.</p>
  `;
}

function OutcomesPanel({ series, windowKey }) {
  const span = WINDOWS[windowKey];
  const { total } = series;
  const ended = OUTCOME_SERIES.reduce((sum, one) => sum + total[one.key], 0);
  return html`
    <section class="panel" data-testid="outcomes-panel">
      <div class="panel-head">
        <h2>Workflows by outcome over time</h2>
        <nav class="status-filter" aria-label="Time window">
          ${Object.entries(WINDOWS).map(([key, one]) => html`<a key=${key} href=${href("metrics", { window: key })} class=${`chip${key === windowKey ? " selected" : ""}`} aria-current=${key === windowKey ? "page" : undefined}>${one.label}</a>`)}
        </nav>
      </div>
      <${StackedBars} buckets=${bucketsOf(series, outcomesOf)} series=${OUTCOME_SERIES} formatX=${bucketLabel(span)} yLabel="workflows ended" title="Workflows ended per interval, by outcome" testId="chart-outcomes" />
      <p class="caption" data-testid="outcomes-caption">
        Workflows that ended in each ${span.bucketWord}, by how they ended, over the last ${span.label}: ${ended} ended, ${total.started} started.
        Kept by the service a minute at a time for every workflow, for ${RETENTION_DAYS} days.
      </p>
    </section>
  `;
}

function RetriesPanel({ total, span }) {
  const rows = [
    { key: "attempts", label: "attempts", value: total.attempts },
    { key: "retries", label: "retries", value: total.retries },
    { key: "timeout", label: "heartbeat timeouts", value: total.timeouts.heartbeat },
    { key: "timeout", label: "start-to-close", value: total.timeouts.start_to_close },
    { key: "timeout", label: "schedule-to-start", value: total.timeouts.schedule_to_start },
    { key: "timeout", label: "stalled", value: total.timeouts.stalled },
    { key: "compensations", label: "compensations", value: total.compensations },
    { key: "escalations", label: "escalations", value: total.escalations },
  ].map((row, i) => ({ ...row, key: `${row.key}-${i}`, series: row.key }));
  const rate = total.attempts > 0 ? `${Math.round((100 * total.retries) / total.attempts)} % of attempts were retries` : "no attempts";
  return html`
    <section class="panel" data-testid="retries-panel">
      <h2>Attempts, retries and timeouts</h2>
      <${HBars} rows=${rows} title="Step attempts, retries and timeouts by kind" testId="chart-retries" />
      <p class="caption">Over the last ${span.label}; ${rate}.</p>
    </section>
  `;
}

function LatenessPanel({ lateness, span }) {
  const rows = [
    { key: "p50", label: "median (p50)", value: lateness.p50 },
    { key: "p99", label: "p99", value: lateness.p99 },
    { key: "max", label: "worst", value: lateness.max },
  ].map((row) => ({ ...row, text: duration(row.value) }));
  return html`
    <section class="panel" data-testid="lateness-panel">
      <h2>Detection lateness</h2>
      ${lateness.count === 0
        ? html`<p class="empty" role="status">No deadline passed in the last ${span.label}, so the supervisor was not late on any.</p>`
        : html`<${HBars} rows=${rows} log=${true} tickValues=${DURATION_TICKS} marker=${{ at: PROMISE_MS, label: "1 s promise" }} formatTick=${tickDuration} title="How late the supervisor acted on deadlines" testId="chart-lateness" />`}
      <p class="caption">
        From a deadline (heartbeat, timeout, a wait's end) to the supervisor's action on it, over the ${lateness.count} detections of the
        last ${span.label}; log scale. Each is an upper bound: p50 and p99 are their histogram buckets' bounds.
      </p>
    </section>
  `;
}

const QUEUE_LAG_SERIES = [{ key: "queue-lag", label: "worst lag" }];

function QueueLagPanel({ series, span }) {
  const sampled = series.series.some((point) => point.queueLagMs !== null);
  return html`
    <section class="panel" data-testid="queue-lag-panel">
      <h2>Task queue lag</h2>
      ${sampled
        ? html`<${StackedBars} buckets=${bucketsOf(series, (point) => ({ "queue-lag": point.queueLagMs ?? 0 }))} series=${QUEUE_LAG_SERIES} formatX=${bucketLabel(span)} yLabel="worst lag" formatY=${tickDuration} formatValue=${duration} title="The task queues' worst lag per interval" testId="chart-queue-lag" />`
        : html`<p class="empty" role="status">The task queues delivered nothing in the last ${span.label}, so no lag was sampled.</p>`}
      <p class="caption">
        The longest a task waited in the queues before an agent took it, worst in each ${span.bucketWord} (0 while the queues kept up). The
        queues are the service's, shared by every tenant; past the back-pressure bound, starts are refused with 503 until they catch up.
      </p>
    </section>
  `;
}

/** Round durations for the lateness axis, a decade or two apart so their labels never collide. */
const DURATION_TICKS = [10, 1_000, 60_000, 3_600_000, 86_400_000];

function tickDuration(ms) {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${ms / 1_000} s`;
  if (ms < 3_600_000) return `${ms / 60_000} min`;
  return `${ms / 3_600_000} h`;
}
