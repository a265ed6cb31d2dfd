// The default page: the tenant's workflows, filtered by status, id prefix and created range, searched by id or
// definition name, paged with the API's cursor, and kept current while any workflow on the page is still open. Each
// open one worth a look says why in a line. Rows can be selected (or every workflow the filter matches) and acted on
// at once, as a bulk job.
import { clock } from "../format.js";
import { html } from "../html.js";
import { REFRESH_MS, useLive } from "../live.js";
import { navigate } from "../router.js";
import { Pager } from "../list/paging.js";
import { SearchBox } from "../list/search-box.js";
import { isTerminal, statusLabel } from "../statuses.js";
import { StatusFilter } from "../list/status-filter.js";
import { WorkflowTable } from "../list/workflow-table.js";
import { BulkBar } from "../list/bulk-bar.js";
import { useSelection } from "../list/selection.js";
import { ListFilters } from "../list/list-filters.js";
import { hasFilters, listHref, loadWorkflowPage, PAGE_SIZES, readListQuery } from "../list/workflow-query.js";

const hasOpenRows = (data) => data?.rows.some((row) => !isTerminal(row.status)) ?? false;

export function WorkflowsPage({ route }) {
  const key = route.search.toString();
  const current = readListQuery(route.search);
  const { data, error, loading } = useLive(async () => ({ ...(await loadWorkflowPage(current)), key }), [key], { active: hasOpenRows });
  // Until the new page arrives the previous one stays, dimmed, and offers no paging of its own.
  const fresh = data?.key === key;
  const to = (changes) => listHref(current, changes);
  const selection = useSelection(key);
  return html`
    <div class="list-head">
      <h1>Workflows</h1>
      <${LiveNote} data=${data} />
    </div>
    <div class="toolbar">
      <${SearchBox} q=${current.q} onSearch=${(q) => navigate(to({ q }))} />
      <${PageSize} limit=${current.limit} onChange=${(limit) => navigate(to({ limit }))} />
    </div>
    <${ListFilters} query=${current} onApply=${(changes) => navigate(to(changes))} />
    <${StatusFilter} current=${current.status} counts=${data?.counts} linkTo=${(status) => to({ status })} />
    ${error && html`<p class="error" role="alert">${error.message}</p>`}
    ${fresh && html`<${BulkBar} selection=${selection} query=${current} pageIds=${data.rows.map((row) => row.id)} />`}
    ${data && data.rows.length > 0 && html`<${WorkflowTable} rows=${data.rows} busy=${!fresh} nameHref=${(q) => to({ q })} now=${data.loadedAt} selection=${selection} />`}
    ${fresh && data.rows.length === 0 && html`<${EmptyList} query=${current} data=${data} clearHref=${to({ q: undefined, status: undefined, idPrefix: undefined, createdAfter: undefined, createdBefore: undefined })} />`}
    ${!data && loading && html`<p class="muted">Loading workflows…</p>`}
    <${Pager} trail=${current.trail} nextCursor=${fresh ? data.nextCursor : undefined} linkTo=${(trail) => to({ trail })} label="Workflow pages" />
  `;
}

function PageSize({ limit, onChange }) {
  const sizes = PAGE_SIZES.includes(limit) ? PAGE_SIZES : [...PAGE_SIZES, limit].sort((a, b) => a - b);
  return html`
    <label class="inline">Per page
      <select value=${limit} onChange=${(event) => onChange(Number(event.currentTarget.value))}>
        ${sizes.map((size) => html`<option value=${size}>${size}</option>`)}
      </select>
    </label>
  `;
}

function LiveNote({ data }) {
  if (!data) return null;
  const open = data.rows.filter((row) => !isTerminal(row.status)).length;
  const text = open > 0 ? `${open} open on this page: refreshing every ${REFRESH_MS / 1_000} s` : "Everything on this page has ended";
  return html`<span class="muted live-note" data-testid="live-note">${text} · as of ${clock(data.loadedAt)}</span>`;
}

function EmptyList({ query, data, clearHref }) {
  if (data.invalidSearch) {
    return html`<p class="empty" role="status">“${query.q}” cannot be a workflow id or a definition name: those use letters, digits and <code>_ . : -</code>, starting with a letter or digit.</p>`;
  }
  if (data.invalidPrefix) {
    return html`<p class="empty" role="status">No workflow id starts with “${query.idPrefix}”: ids use letters, digits and <code>_ . : -</code>, starting with a letter or digit. <a href=${clearHref}>Show all workflows</a></p>`;
  }
  if (!hasFilters(query) && query.status === undefined) {
    return html`<p class="empty" role="status">No workflows yet. Start one with <code>POST /v1/workflows</code> (see the <a href="/docs" target="_blank" rel="noopener">API reference</a>); it shows up here.</p>`;
  }
  const what = query.status ? `${statusLabel(query.status)} workflows` : "workflows";
  const match = query.q ? ` with the id or definition name “${query.q}”` : "";
  const prefix = query.idPrefix ? ` whose id starts with “${query.idPrefix}”` : "";
  const range = rangeWords(query);
  return html`<p class="empty" role="status">No ${what}${match}${prefix}${range}${query.trail.length > 0 ? " on this page" : ""}. <a href=${clearHref}>Show all workflows</a></p>`;
}

/** " created from 12:00:00 to 13:00:00", or nothing without a range. */
function rangeWords({ createdAfter, createdBefore }) {
  const from = createdAfter ? ` from ${clock(Date.parse(createdAfter))}` : "";
  const to = createdBefore ? ` before ${clock(Date.parse(createdBefore))}` : "";
  return from || to ? ` created${from}${to}` : "";
}
