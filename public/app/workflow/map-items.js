// A map step's items, a page at a time, from GET /v1/workflows/{id}/steps/{stepId}/items: filterable by status,
// Previous/Next through the API's cursors. The API hands out the next page's cursor only, so the cursors that led
// here are kept (the trail) and Previous drops the last. The page is read again whenever the map's counts move.
import { useMemo, useState } from "preact/hooks";
import { api, query } from "../api.js";
import { MAP_ITEM_STATUSES } from "../generated/contract.js";
import { html } from "../html.js";
import { TableScroll } from "../list/table-scroll.js";
import { useLive } from "../live.js";
import { statusLabel } from "../statuses.js";
import { errorWords } from "./timeline-model.js";

export const ITEMS_PAGE = 25;
const PREVIEW_CHARS = 100;

export function MapItems({ workflowId, stepId, counts }) {
  const [status, setStatus] = useState(undefined);
  const [trail, setTrail] = useState([]);
  const filter = (next) => {
    setStatus(next);
    setTrail([]);
  };
  const path = `/v1/workflows/${encodeURIComponent(workflowId)}/steps/${encodeURIComponent(stepId)}/items`;
  const cursor = trail.at(-1);
  const load = useMemo(() => () => api(`${path}${query({ status, cursor, limit: ITEMS_PAGE })}`), [path, status, cursor]);
  // The counts as a key: a page is read again when they move, not on every refresh of the workflow.
  const { data, error } = useLive(load, [load, JSON.stringify(counts)]);
  return html`
    <div class="map-items" data-testid=${`map-items-${stepId}`}>
      <${StatusFilter} stepId=${stepId} status=${status} onChange=${filter} />
      ${error && html`<p class="error" role="alert">Reading the items failed: ${error.message}</p>`}
      ${data && html`<${ItemRows} stepId=${stepId} items=${data.items} status=${status} />`}
      <${ItemsPager} page=${trail.length + 1} hasNext=${Boolean(data?.nextCursor)}
        onPrevious=${() => setTrail(trail.slice(0, -1))} onNext=${() => setTrail([...trail, data.nextCursor])} />
    </div>
  `;
}

function StatusFilter({ stepId, status, onChange }) {
  return html`
    <label class="inline-left">Items
      <select name=${`item-status-${stepId}`} value=${status ?? ""} onChange=${(event) => onChange(event.currentTarget.value || undefined)}>
        <option value="">all</option>
        ${MAP_ITEM_STATUSES.map((value) => html`<option value=${value}>${statusLabel(value)}</option>`)}
      </select>
    </label>
  `;
}

function ItemRows({ stepId, items, status }) {
  if (items.length === 0) return html`<p class="muted">No ${status ? `${statusLabel(status)} ` : ""}items${status ? "" : " yet"}.</p>`;
  return html`
    <${TableScroll} label=${`Items of ${stepId}`}>
      <table class="items">
        <thead><tr><th>Item</th><th>Status</th><th>Attempt</th><th>Output or error</th></tr></thead>
        <tbody>
          ${items.map(
            (item) => html`<tr key=${item.index} data-index=${item.index} data-status=${item.status}>
              <td class="mono">#${item.index}</td>
              <td><span class=${`status ${item.status}`}>${statusLabel(item.status)}</span></td>
              <td class="mono">${item.attempt === 0 ? "—" : item.attempt}</td>
              <td>${item.error ? html`<span class="error">${errorWords(item.error)}</span>` : html`<code>${preview(item.output)}</code>`}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </${TableScroll}>
  `;
}

function ItemsPager({ page, hasNext, onPrevious, onNext }) {
  if (page === 1 && !hasNext) return null;
  return html`
    <nav class="pager" aria-label="Pages of items">
      <button type="button" disabled=${page === 1} onClick=${onPrevious}>← Previous</button>
      <span class="muted" data-testid="items-page">Page ${page}</span>
      <button type="button" disabled=${!hasNext} onClick=${onNext}>Next →</button>
    </nav>
  `;
}

function preview(value) {
  if (value === undefined) return "—";
  const line = JSON.stringify(value);
  return line.length > PREVIEW_CHARS ? `${line.slice(0, PREVIEW_CHARS - 1)}…` : line;
}
