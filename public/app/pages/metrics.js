import { html } from "../html.js";
export function MetricsPage() {
  return html`<h1>Metrics</h1>`;
}
