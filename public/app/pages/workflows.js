import { html } from "../html.js";
export function WorkflowsPage() {
  return html`<h1>Workflows</h1>`;
}
