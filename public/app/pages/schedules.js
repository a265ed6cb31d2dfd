import { html } from "../html.js";
export function SchedulesPage() {
  return html`<h1>Schedules</h1>`;
}
