// A webhook's event filters, one code chip each ("workflow.*", "step.timed_out").
import { html } from "../html.js";

export function EventFilters({ events }) {
  return html`<ul class="event-filters">${events.map((event) => html`<li key=${event}><code>${event}</code></li>`)}</ul>`;
}
