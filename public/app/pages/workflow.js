import { html } from "../html.js";
export function WorkflowPage({ id }) {
  return html`<h1>Workflow ${id}</h1>`;
}
