// What to do with the selected workflows: each bulk action behind a confirmation that says which workflows it will
// reach. Confirming creates a bulk job (POST /v1/bulk), which runs in the service at its own pace, and opens the
// job's page, where its progress shows.
import { api } from "../api.js";
import { ConfirmButton } from "../confirm.js";
import { clock } from "../format.js";
import { html } from "../html.js";
import { href, navigate } from "../router.js";
import { statusLabel } from "../statuses.js";

/**
 * The actions offered, in the order of the toolbar, with what each does to one workflow and the words of the button
 * that leaves them as they are (never "Cancel", which is one of the actions).
 */
const ACTIONS = [
  { action: "pause", label: "Pause", keep: "Keep them running", does: "Each running one is paused: nothing new is dispatched until it is resumed." },
  { action: "resume", label: "Resume", keep: "Keep them paused", does: "Each paused one runs again." },
  { action: "redrive", label: "Redrive", keep: "Leave them as they are", does: "Each failed, cancelled or terminated one runs again from the steps that did not succeed." },
  { action: "cancel", label: "Cancel", keep: "Keep them running", danger: true, does: "Each is cancelled: running attempts are fenced and the steps that succeeded are compensated." },
  { action: "terminate", label: "Terminate", keep: "Keep them running", danger: true, does: "Each is terminated at once: running attempts are fenced and nothing is compensated." },
];

/**
 * The bulk filter the selection stands for. "All matching" is the list's own filter; with no filter at all it says
 * so outright with a time bound, since the API never reads an empty filter as every workflow.
 */
export function bulkFilterOf(selection, query, now = Date.now()) {
  if (!selection.allMatching) return { ids: selection.ids };
  const filter = {
    ...(query.status ? { status: query.status } : {}),
    ...(query.q ? { name: query.q } : {}),
    ...(query.idPrefix ? { idPrefix: query.idPrefix } : {}),
    // The bulk filter takes epoch ms where the list's query took ISO 8601.
    ...(query.createdAfter ? { createdAfter: Date.parse(query.createdAfter) } : {}),
    ...(query.createdBefore ? { createdBefore: Date.parse(query.createdBefore) } : {}),
  };
  return Object.keys(filter).length > 0 ? filter : { createdBefore: now };
}

/** "3 selected workflows", or "every running workflow of orders whose id starts with eu-, created from 12:00:00". */
export function selectionWords(selection, query) {
  if (!selection.allMatching) return `${selection.size} selected workflow${selection.size === 1 ? "" : "s"}`;
  const status = query.status ? `${statusLabel(query.status)} ` : "";
  const name = query.q ? ` of definition ${query.q}` : "";
  const prefix = query.idPrefix ? ` whose id starts with ${query.idPrefix}` : "";
  const from = query.createdAfter ? ` from ${clock(Date.parse(query.createdAfter))}` : "";
  const to = query.createdBefore ? ` before ${clock(Date.parse(query.createdBefore))}` : "";
  const range = from || to ? `, created${from}${to}` : "";
  return `every ${status}workflow${name}${prefix}${range}, on every page`;
}

/** `pageIds`: the rows on this page; when all of them are selected, the bar offers every matching workflow. */
export function BulkBar({ selection, query, pageIds }) {
  if (selection.size === 0 && !selection.allMatching) return null;
  const wholePage = pageIds.length > 0 && pageIds.every((id) => selection.ids.includes(id));
  const words = selectionWords(selection, query);
  const start = (action) => async (_input, reason) => {
    const body = { action, filter: bulkFilterOf(selection, query), ...(reason ? { reason } : {}) };
    const job = await api("/v1/bulk", { method: "POST", body });
    navigate(href("bulk", job.id));
  };
  return html`
    <div class="bulk-bar" data-testid="bulk-bar" role="region" aria-label="Bulk actions">
      <strong data-testid="selection">${words[0].toUpperCase()}${words.slice(1)}</strong>
      ${wholePage && !selection.allMatching && html`<button type="button" class="plain" data-testid="select-all-matching" onClick=${selection.selectAllMatching}>Select all workflows matching this filter</button>`}
      <button type="button" class="plain" onClick=${selection.clear}>Clear selection</button>
      <span class="spacer"></span>
      ${ACTIONS.map(
        ({ action, label, keep, does, danger }) => html`<${ConfirmButton}
          key=${action}
          label=${label}
          testId=${`bulk-${action}`}
          title=${`${label} ${words}?`}
          message=${`${does} It runs as a bulk job, a few workflows at a time; a workflow that refuses (one that has already ended, say) is counted as failed with its reason. Its progress opens next.`}
          confirmLabel=${`${label} them`}
          dismissLabel=${keep}
          danger=${danger === true}
          askReason
          run=${start(action)}
        />`,
      )}
    </div>
  `;
}
