// A few charts of the tenant's figures: workflows by outcome over time, attempts/retries/timeouts, and how
// late the supervisor acted on deadlines. Drawn by hand as SVG (public/app/charts), no chart library.
import { clock, duration } from "../format.js";
import { html } from "../html.js";
import { useLive } from "../live.js";
import { href } from "../router.js";
import { HBars } from "../charts/hbars.js";
import { loadMetrics } from "../charts/metrics-data.js";
import { bucketLabel, DEFAULT_WINDOW, OUTCOME_SERIES, WINDOWS } from "../charts/outcome-series.js";
import { StackedBars } from "../charts/stacked-bars.js";
import { OUTCOMES } from "../statuses.js";

const REFRESH_MS = 5_000;
/** The contract's promise: a missed deadline is acted on within 1 s. */
const PROMISE_MS = 1_000;

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
      <${OutcomesPanel} data=${data} windowKey=${key} />
      <div class="chart-row">
        <${RetriesPanel} figures=${data.figures} />
        <${LatenessPanel} lateness=${data.figures.detectionLatenessMs} />
      </div>`}
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
  return html`<dl class="figures">${items.map(([label, value]) => html`<div key=${label}><dt>${label}</dt><dd>${value}</dd></div>`)}</dl>`;
}

function OutcomesPanel({ data, windowKey }) {
  const span = WINDOWS[windowKey];
  const { listed } = data;
  return html`
    <section class="panel" data-testid="outcomes-panel">
      <div class="panel-head">
        <h2>Workflows by outcome over time</h2>
        <nav class="status-filter" aria-label="Time window">
          ${Object.entries(WINDOWS).map(([key, one]) => html`<a key=${key} href=${href("metrics", { window: key })} class=${`chip${key === windowKey ? " selected" : ""}`} aria-current=${key === windowKey ? "page" : undefined}>${one.label}</a>`)}
        </nav>
      </div>
      <${StackedBars} buckets=${data.outcomes} series=${OUTCOME_SERIES} formatX=${bucketLabel(span)} yLabel="workflows ended" title="Workflows ended per interval, by outcome" testId="chart-outcomes" />
      <p class="caption">
        Workflows that ended in each ${span.bucketWord}, by how they ended, over the last ${span.label}. Counted from the workflow
        list (their last status change is when they ended): the ${listed.workflows.length} workflows started since ${clock(listed.since)}${listed.capped ? " (capped: older ones are not counted)" : ""}.
      </p>
    </section>
  `;
}

function RetriesPanel({ figures }) {
  const { steps } = figures;
  const rows = [
    { key: "attempts", label: "attempts", value: steps.attempts },
    { key: "retries", label: "retries", value: steps.retries },
    { key: "timeout", label: "heartbeat timeouts", value: steps.timeouts.heartbeat },
    { key: "timeout", label: "start-to-close", value: steps.timeouts.start_to_close },
    { key: "timeout", label: "schedule-to-start", value: steps.timeouts.schedule_to_start },
    { key: "timeout", label: "stalled", value: steps.timeouts.stalled },
    { key: "compensations", label: "compensations", value: figures.compensations },
    { key: "escalations", label: "escalations", value: figures.escalations },
  ].map((row, i) => ({ ...row, key: `${row.key}-${i}`, series: row.key }));
  const rate = steps.attempts > 0 ? `${Math.round((100 * steps.retries) / steps.attempts)} % of attempts were retries` : "no attempts yet";
  return html`
    <section class="panel" data-testid="retries-panel">
      <h2>Attempts, retries and timeouts</h2>
      <${HBars} rows=${rows} title="Step attempts, retries and timeouts by kind" testId="chart-retries" />
      <p class="caption">All time, summed over the tenant's workflows; ${rate}.</p>
    </section>
  `;
}

function LatenessPanel({ lateness }) {
  const rows = [
    { key: "p50", label: "median (p50)", value: lateness.p50 },
    { key: "p99", label: "p99", value: lateness.p99 },
    { key: "max", label: "worst", value: lateness.max },
  ].map((row) => ({ ...row, text: duration(row.value) }));
  return html`
    <section class="panel" data-testid="lateness-panel">
      <h2>Detection lateness</h2>
      ${lateness.count === 0
        ? html`<p class="empty" role="status">No deadline has passed yet, so the supervisor has not been late on any.</p>`
        : html`<${HBars} rows=${rows} log=${true} tickValues=${DURATION_TICKS} marker=${{ at: PROMISE_MS, label: "1 s promise" }} formatTick=${tickDuration} title="How late the supervisor acted on deadlines" testId="chart-lateness" />`}
      <p class="caption">
        From a deadline (heartbeat, timeout, a wait's end) to the supervisor's action on it, over ${lateness.count} detections; log scale.
        p50 and p99 are the upper bounds of their histogram buckets.
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
