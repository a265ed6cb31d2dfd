// The rows of the workflows list: each workflow's id (its page), definition, status and when it ran, and a
// checkbox to select it for a bulk action (the header's selects the whole page).
import { clock } from "../format.js";
import { html } from "../html.js";
import { TableScroll } from "./table-scroll.js";
import { href } from "../router.js";
import { runTime } from "./relative-time.js";
import { isTerminal, statusLabel } from "../statuses.js";

/**
 * `nameHref(name)` links a definition name to the list filtered by it; `busy`: another page is on its way.
 * `selection` (list/selection.js) is what the checkboxes show and change.
 */
export function WorkflowTable({ rows, busy, nameHref, now, selection }) {
  const ids = rows.map((row) => row.id);
  const all = ids.length > 0 && ids.every((id) => selection.has(id));
  return html`
    <${TableScroll} label="Workflows">
      <table class=${`workflow-list${busy ? " stale" : ""}`} data-testid="workflow-list" aria-busy=${busy ? "true" : "false"}>
        <thead>
          <tr>
            <th class="select"><input type="checkbox" aria-label="Select every workflow on this page" data-testid="select-page" checked=${all} disabled=${selection.allMatching} onChange=${(e) => selection.setPage(ids, e.currentTarget.checked)} /></th>
            <th>Workflow</th><th>Definition</th><th>Status</th><th>Started</th><th>Last status change</th><th>Run time</th>
          </tr>
        </thead>
        <tbody>
          ${rows.map((row) => html`<${WorkflowRow} key=${row.id} row=${row} nameHref=${nameHref} now=${now} selection=${selection} />`)}
        </tbody>
      </table>
    </${TableScroll}>
  `;
}

/** When it started; a scheduled workflow's start is still to come, and says when. */
function StartedCell({ row }) {
  if (row.status === "scheduled" && row.startAt !== undefined) {
    return html`<td title=${`Created ${new Date(row.createdAt).toISOString()}, starts ${new Date(row.startAt).toISOString()}`} data-testid="starts-at">starts ${clock(row.startAt)}</td>`;
  }
  return html`<td title=${new Date(row.createdAt).toISOString()}>${clock(row.createdAt)}</td>`;
}

function WorkflowRow({ row, nameHref, now, selection }) {
  const ended = isTerminal(row.status);
  return html`
    <tr data-workflow-id=${row.id} data-status=${row.status}>
      <td class="select"><input type="checkbox" aria-label=${`Select ${row.id}`} checked=${selection.has(row.id)} disabled=${selection.allMatching} onChange=${() => selection.toggle(row.id)} /></td>
      <td>
        <a class="mono" href=${href("workflows", row.id)}>${row.id}</a>
        ${row.matchedBy === "id" && html` <span class="tag" title="Its id is exactly the search text">id match</span>`}
      </td>
      <td><a href=${nameHref(row.name)} title=${`Only ${row.name} workflows`}>${row.name}</a></td>
      <td><span class=${`status ${row.status}`}>${statusLabel(row.status)}</span></td>
      <${StartedCell} row=${row} />
      <td title=${new Date(row.updatedAt).toISOString()}>${ended ? "ended " : ""}${clock(row.updatedAt)}</td>
      <td class=${ended ? "" : "muted"}>${row.status === "scheduled" ? "not started" : runTime(row.createdAt, ended ? row.updatedAt : undefined, now)}</td>
    </tr>
  `;
}
