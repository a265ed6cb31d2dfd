// The history as an operator reads it: newest or oldest first, a page at a time, each event's type, time, step,
// who acted (an operator's action: the token's name, and the reason they gave) and a short summary, with its full
// JSON one click away. A map's item events are folded into one line per map
// (history-fold.js) unless the operator asks for them.
import { useMemo, useState } from "preact/hooks";
import { html } from "../html.js";
import { TableScroll } from "../list/table-scroll.js";
import { eventSummary, eventTypeWords } from "./event-words.js";
import { foldItemEvents, foldWords } from "./history-fold.js";
import { preciseClock } from "./time.js";

const PAGE = 20;

/** Event types worth a colour of their own in the list: how things ended. */
const TONES = {
  workflow_completed: "completed",
  step_succeeded: "succeeded",
  step_failed: "failed",
  workflow_failed: "failed",
  step_timed_out: "failed",
  step_heartbeat_missed: "failed",
  workflow_escalated: "needs_attention",
  step_retry_scheduled: "paused",
  operator_action: "running",
  workflow_paused: "paused",
  workflow_compensated: "compensated",
  step_compensated: "compensated",
};

export function History({ events, onSelectStep }) {
  const [newestFirst, setNewestFirst] = useState(true);
  const [shown, setShown] = useState(PAGE);
  const [unfolded, setUnfolded] = useState(false);
  const folded = useMemo(() => foldItemEvents(events), [events]);
  const listed = unfolded ? events : folded.events;
  const ordered = newestFirst ? [...listed].reverse() : listed;
  return html`
    <div class="history" data-testid="history">
      <div class="toolbar">
        <span class="muted">${plural(events.length, "event")}</span>
        <span class="spacer"></span>
        ${folded.maps.length > 0 &&
        html`<label class="inline"><input type="checkbox" name="unfold-items" checked=${unfolded} onChange=${(event) => setUnfolded(event.currentTarget.checked)} /> Map items' events</label>`}
        <label class="inline"><input type="checkbox" checked=${newestFirst} onChange=${(event) => setNewestFirst(event.currentTarget.checked)} /> Newest first</label>
      </div>
      <${FoldedMaps} maps=${folded.maps} unfolded=${unfolded} />
      <${TableScroll} label="History">
        <table class="events">
          <thead><tr><th>#</th><th>Time</th><th>Event</th><th>Step</th><th>By</th><th>Details</th></tr></thead>
          <tbody>${ordered.slice(0, shown).map((event) => html`<${EventRow} key=${event.seq} event=${event} onSelectStep=${onSelectStep} />`)}</tbody>
        </table>
      </${TableScroll}>
      ${ordered.length > shown &&
      html`<p><button type="button" onClick=${() => setShown(shown + PAGE)}>Show ${Math.min(PAGE, ordered.length - shown)} more</button>
        <span class="muted"> of ${ordered.length - shown} not shown</span></p>`}
    </div>
  `;
}

/** One line per map whose item events are folded away: its items' counts and how many events that hides. */
function FoldedMaps({ maps, unfolded }) {
  if (maps.length === 0) return null;
  return html`
    <ul class="map-folds">
      ${maps.map(
        (map) => html`<li key=${map.stepId} data-testid=${`history-map-${map.stepId}`}>${foldWords(map)}
          <span class="muted"> (${plural(map.events, "item event")}${unfolded ? " listed below" : " folded"})</span></li>`,
      )}
    </ul>
  `;
}

function plural(n, noun) {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function EventRow({ event, onSelectStep }) {
  const tone = TONES[event.type];
  return html`
    <tr data-seq=${event.seq} data-type=${event.type}>
      <td class="muted mono">${event.seq}</td>
      <td class="mono">${preciseClock(event.at)}</td>
      <td><span class=${`event-type ${tone ?? ""}`}>${eventTypeWords(event.type)}</span></td>
      <td>${event.stepId && html`<button type="button" class="step-link" onClick=${() => onSelectStep(event.stepId)}>${event.stepId}</button>`}
        ${event.attempt !== undefined && html` <span class="muted">#${event.attempt}</span>`}</td>
      <td class="acted-by">${event.data?.actor !== undefined && html`<span class="actor">${event.data.actor}</span>`}
        ${typeof event.data?.reason === "string" && html`<div class="reason">${event.data.reason}</div>`}</td>
      <td>
        ${event.data === undefined
          ? html`<span class="muted">—</span>`
          : html`<details>
              <summary>${eventSummary(event)}</summary>
              <pre>${JSON.stringify(event, null, 2)}</pre>
            </details>`}
      </td>
    </tr>
  `;
}
