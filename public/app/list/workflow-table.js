// The rows of the workflows list: each workflow's id (its page), definition, status and, for an open one worth a
// look, the service's line of why (a retry, a wait for an event, a failure waiting on an operator …) with the step,
// its attempts and the next deadline; when it ran and ended; and a checkbox to select it for a bulk action (the
// header's selects the whole page).
import { clock } from "../format.js";
import { html } from "../html.js";
import { TableScroll } from "./table-scroll.js";
import { href } from "../router.js";
import { relative, runTime } from "./relative-time.js";
import { isTerminal, statusLabel } from "../statuses.js";

/**
 * The colour of a line, by its first words (the service's, src/domain/machine/triage.ts): what waits on an operator
 * as a failure, a retry or an open breaker as a warning, a pause as a pause, and a wait (an event, a worker, a
 * deferred start) in the wait's colour, so none of them reads as plain "running".
 */
const TONES = [
  ["needs attention", "failed"],
  ["retrying", "retrying"],
  ["circuit open", "retrying"],
  ["paused", "paused"],
];

function toneOf(summary) {
  return TONES.find(([words]) => summary.startsWith(words))?.[1] ?? "waiting";
}

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
            <th>Workflow</th><th>Definition</th><th>Status</th><th>Step</th><th>Next deadline</th><th>Started</th><th>Ended</th><th>Run time</th>
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

/** The status, and under it the line of why an open workflow is worth a look. */
function StatusCell({ row }) {
  return html`
    <td class="status-cell">
      <span class=${`status ${row.status}`}>${statusLabel(row.status)}</span>
      ${row.summary && html`<div class=${`summary ${toneOf(row.summary)}`} data-testid="summary">${row.summary}</div>`}
    </td>
  `;
}

/** The step the line is about, with its attempts out of its retry policy's. */
function StepCell({ row }) {
  if (row.stepId === undefined) return html`<td class="muted">—</td>`;
  return html`
    <td data-testid="step">
      <span class="mono">${row.stepId}</span>
      ${row.attempts && html`<div class="muted small" data-testid="attempts" title="Attempts of its retry policy">attempt ${row.attempts.used} of ${row.attempts.max}</div>`}
    </td>
  `;
}

/** When the supervisor next acts on what the line names: a time, and how far off (or ago, until the next refresh). */
function DeadlineCell({ row, now }) {
  if (row.nextDeadlineAt === undefined) return html`<td class="muted">—</td>`;
  return html`
    <td data-testid="next-deadline" title=${new Date(row.nextDeadlineAt).toISOString()}>
      ${clock(row.nextDeadlineAt)}<div class="muted small">${relative(row.nextDeadlineAt, now)}</div>
    </td>
  `;
}

function WorkflowRow({ row, nameHref, now, selection }) {
  const ended = isTerminal(row.status);
  const endedAt = ended ? (row.endedAt ?? row.updatedAt) : undefined;
  return html`
    <tr data-workflow-id=${row.id} data-status=${row.status} data-attention=${row.summary ? toneOf(row.summary) : undefined}>
      <td class="select"><input type="checkbox" aria-label=${`Select ${row.id}`} checked=${selection.has(row.id)} disabled=${selection.allMatching} onChange=${() => selection.toggle(row.id)} /></td>
      <td>
        <a class="mono" href=${href("workflows", row.id)}>${row.id}</a>
        ${row.matchedBy === "id" && html` <span class="tag" title="Its id is exactly the search text">id match</span>`}
      </td>
      <td><a href=${nameHref(row.name)} title=${`Only ${row.name} workflows`}>${row.name}</a></td>
      <${StatusCell} row=${row} />
      <${StepCell} row=${row} />
      <${DeadlineCell} row=${row} now=${now} />
      <${StartedCell} row=${row} />
      ${endedAt === undefined ? html`<td class="muted">—</td>` : html`<td title=${new Date(endedAt).toISOString()} data-testid="ended-at">${clock(endedAt)}</td>`}
      <td class=${ended ? "" : "muted"}>${row.status === "scheduled" ? "not started" : runTime(row.createdAt, endedAt, now)}</td>
    </tr>
  `;
}
