// One link per status the API filters by, with the tenant's count of each when the metrics gave it.
import { html } from "../html.js";
import { WORKFLOW_STATUSES } from "../generated/contract.js";
import { statusLabel } from "../statuses.js";

/** `linkTo(status)` is the list's href for that status (undefined: all). */
export function StatusFilter({ current, counts, linkTo }) {
  const total = counts ? Object.values(counts).reduce((sum, n) => sum + n, 0) : undefined;
  return html`
    <nav class="status-filter" aria-label="Status filter">
      ${chip({ label: "all", to: linkTo(undefined), selected: current === undefined, count: total, key: "all" })}
      ${WORKFLOW_STATUSES.map((status) => chip({ label: statusLabel(status), to: linkTo(status), selected: current === status, count: counts?.[status], key: status }))}
    </nav>
  `;
}

function chip({ label, to, selected, count, key }) {
  return html`
    <a href=${to} class=${`chip${selected ? " selected" : ""}`} aria-current=${selected ? "page" : undefined} data-status-filter=${key}>
      ${key !== "all" && html`<span class=${`dot ${key}`}></span>`}${label}
      ${count !== undefined && html`<span class="count">${count}</span>`}
    </a>
  `;
}
