// A map step's own panel on the workflow page: its progress out of the total, then its items page by page.
import { html } from "../html.js";
import { MapItems } from "./map-items.js";
import { MapProgress } from "./map-progress.js";
import { statusLabel } from "../statuses.js";

/** One panel per map step of the workflow, in the view's order; none for a workflow without one. */
export function MapSteps({ view }) {
  return view.steps
    .filter((step) => step.kind === "map")
    .map(
      (step) => html`
        <section class="panel map-step" key=${`${view.id}/${step.id}`} data-testid=${`map-step-${step.id}`} aria-labelledby=${`map-heading-${step.id}`}>
          <h2 id=${`map-heading-${step.id}`}>Map <code>${step.id}</code> <span class=${`status ${step.status}`}>${statusLabel(step.status)}</span></h2>
          <${MapProgress} stepId=${step.id} items=${step.items} />
          ${step.items && html`<${MapItems} workflowId=${view.id} stepId=${step.id} counts=${step.items} />`}
        </section>
      `,
    );
}
