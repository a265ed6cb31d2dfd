// The rows of the targets page, open breakers first: each host's breaker state, its failures in a row, until when it
// stays open (or since when it probes), and the attempts parked on it. A closed breaker reads quietly; an open one
// is marked in red, a half-open one in amber.
import { clock } from "../format.js";
import { html } from "../html.js";
import { relative } from "./relative-time.js";
import { TableScroll } from "./table-scroll.js";

/** Open first, then half-open, then closed; by host within each, as the API lists them. */
const ORDER = { open: 0, half_open: 1, closed: 2 };
const WORDS = { open: "open", half_open: "half-open", closed: "closed" };

export const unhealthy = (target) => target.state !== "closed";

/** "half_open" → "half-open". */
export const stateWords = (state) => WORDS[state] ?? state;

export function TargetTable({ targets, now }) {
  const rows = [...targets].sort((a, b) => ORDER[a.state] - ORDER[b.state] || a.host.localeCompare(b.host));
  return html`
    <${TableScroll} label="Targets">
      <table class="target-list stack-narrow" data-testid="target-list">
        <thead><tr><th>Host</th><th>Breaker</th><th title="Transient failures in a row">Failures</th><th>Open until</th><th title="Attempts waiting for the breaker to close">Parked</th></tr></thead>
        <tbody>
          ${rows.map(
            (target) => html`<tr key=${target.host} data-host=${target.host} data-state=${target.state} class=${`breaker-${target.state}`}>
              <td data-label="Host" class="mono">${target.host}</td>
              <td data-label="Breaker" data-testid="target-state"><${State} state=${target.state} /></td>
              <td data-label="Failures" data-testid="target-failures">${target.failures}</td>
              <td data-label="Open until" data-testid="target-open-until"><${OpenUntil} target=${target} now=${now} /></td>
              <td data-label="Parked" data-testid="target-parked">${target.parked}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>
  `;
}

function State({ state }) {
  if (state === "closed") return html`<span class="quiet-state"><span class="dot completed" aria-hidden="true"></span>closed</span>`;
  return html`<span class=${`status breaker ${state}`}>${stateWords(state)}</span>`;
}

/** Open: until when, and how long that is. Half-open: it has been probing since then. */
function OpenUntil({ target, now }) {
  if (target.openUntil === undefined) return html`<span class="muted">—</span>`;
  const at = html`<span title=${new Date(target.openUntil).toISOString()}>${clock(target.openUntil)}</span>`;
  if (target.state === "half_open") return html`<span class="muted">probing since</span> ${at}`;
  return html`${at} <div class="muted">${target.openUntil > now ? relative(target.openUntil, now) : "closing now"}</div>`;
}
