// Bulk jobs (GET /v1/bulk, GET /v1/bulk/{id}): each one's action, filter and progress, refreshed while it runs. A
// job's own page lists the workflows that refused its action, with why. Jobs are started from the workflows list.
import { api, query } from "../api.js";
import { clock } from "../format.js";
import { html } from "../html.js";
import { TableScroll } from "../list/table-scroll.js";
import { REFRESH_MS, useLive } from "../live.js";
import { BulkProgress } from "../list/bulk-progress.js";
import { href } from "../router.js";

const running = (job) => job.status === "running";

export function BulkPage({ route }) {
  const id = route.params[0];
  return id ? html`<${BulkJobPage} id=${id} />` : html`<${BulkJobsPage} />`;
}

function BulkJobsPage() {
  const load = async () => ({ ...(await api(`/v1/bulk${query({ limit: 50 })}`)), loadedAt: Date.now() });
  const { data, error, loading } = useLive(load, [], { active: (page) => page.jobs.some(running) });
  return html`
    <div class="list-head">
      <h1>Bulk jobs</h1>
      ${data && html`<span class="muted live-note" data-testid="live-note">${data.jobs.some(running) ? `refreshing every ${REFRESH_MS / 1_000} s · ` : ""}as of ${clock(data.loadedAt)}</span>`}
    </div>
    ${error && html`<p class="error" role="alert">${error.message}</p>`}
    ${!data && loading && html`<p class="muted">Loading bulk jobs…</p>`}
    ${data && data.jobs.length === 0 && html`<p class="empty" role="status">No bulk jobs yet. Select workflows in the <a href=${href("workflows")}>workflows list</a> and act on all of them at once.</p>`}
    ${data && data.jobs.length > 0 && html`<${BulkJobTable} jobs=${data.jobs} />`}
  `;
}

function BulkJobTable({ jobs }) {
  return html`
    <${TableScroll} label="Bulk jobs">
      <table class="bulk-list" data-testid="bulk-list">
        <thead><tr><th>Job</th><th>Action</th><th>Workflows</th><th>Progress</th><th>Reason</th><th>By</th><th>Started</th></tr></thead>
        <tbody>
          ${jobs.map(
            (job) => html`<tr key=${job.id} data-bulk-id=${job.id} data-status=${job.status}>
              <td><a class="mono" href=${href("bulk", job.id)}>${job.id.slice(0, 8)}</a></td>
              <td>${job.action}</td>
              <td>${filterWords(job.filter)}</td>
              <td><${BulkProgress} job=${job} /></td>
              <td>${job.reason ?? html`<span class="muted">—</span>`}</td>
              <td>${job.actor}</td>
              <td title=${new Date(job.createdAt).toISOString()}>${clock(job.createdAt)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </${TableScroll}>
  `;
}

function BulkJobPage({ id }) {
  const load = () => api(`/v1/bulk/${encodeURIComponent(id)}`);
  const { data: job, error, loading } = useLive(load, [id], { active: running });
  if (error && !job) return html`<p class="error" role="alert">${error.status === 404 ? `No bulk job "${id}".` : error.message}</p>`;
  if (!job) return loading ? html`<p class="muted">Loading the bulk job…</p>` : null;
  return html`
    <div class="list-head">
      <h1>Bulk ${job.action}${job.event ? ` ${job.event.event}` : ""}</h1>
      <span class=${`status ${job.status === "done" ? "completed" : "running"}`} data-testid="bulk-status">${job.status}</span>
      ${running(job) && html`<span class="muted live-note">refreshing every ${REFRESH_MS / 1_000} s</span>`}
    </div>
    <${BulkProgress} job=${job} />
    <dl class="bulk-facts">
      <dt>Workflows</dt><dd>${filterWords(job.filter)}</dd>
      ${job.reason && html`<dt>Reason</dt><dd>${job.reason}</dd>`}
      <dt>By</dt><dd>${job.actor}</dd>
      <dt>Started</dt><dd>${clock(job.createdAt)}</dd>
      ${job.endedAt && html`<dt>Done</dt><dd>${clock(job.endedAt)}</dd>`}
      <dt>Job</dt><dd class="mono">${job.id}</dd>
    </dl>
    ${job.errors.length > 0 && html`<${Refusals} job=${job} />`}
  `;
}

function Refusals({ job }) {
  return html`
    <h2>Refused (${job.failed})</h2>
    ${job.failed > job.errors.length && html`<p class="muted">The first ${job.errors.length} are listed.</p>`}
    <${TableScroll} label="Refused workflows">
      <table class="bulk-errors" data-testid="bulk-errors">
        <thead><tr><th>Workflow</th><th>Code</th><th>Why</th></tr></thead>
        <tbody>
          ${job.errors.map((refusal) => html`<tr key=${refusal.workflowId}><td><a class="mono" href=${href("workflows", refusal.workflowId)}>${refusal.workflowId}</a></td><td>${refusal.code}</td><td>${refusal.message}</td></tr>`)}
        </tbody>
      </table>
    </${TableScroll}>
  `;
}

/** "running workflows of orders", "3 workflows by id", "created before 12:03:07". */
function filterWords(filter) {
  const parts = [];
  if (filter.ids) parts.push(`${filter.ids.length} workflow${filter.ids.length === 1 ? "" : "s"} by id`);
  if (filter.status) parts.push(`status ${filter.status}`);
  if (filter.name) parts.push(`definition ${filter.name}`);
  if (filter.parentId) parts.push(`children of ${filter.parentId}`);
  if (filter.idPrefix) parts.push(`ids starting with ${filter.idPrefix}`);
  if (filter.createdAfter !== undefined) parts.push(`created from ${clock(filter.createdAfter)}`);
  if (filter.createdBefore !== undefined) parts.push(`created before ${clock(filter.createdBefore)}`);
  return parts.join(", ");
}
