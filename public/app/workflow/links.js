// Between a parent workflow and its children: a child's view carries `parent: {id, stepId}`, the parent's
// `workflow` step carries `child: {id, status}`; each side links to the other's page.
import { html } from "../html.js";
import { href } from "../router.js";
import { statusLabel } from "../statuses.js";

/** The header's fact for a child workflow: which workflow started it, from which step. */
export function ParentFact({ parent }) {
  if (!parent) return null;
  return html`<div data-testid="workflow-parent"><dt>Parent</dt><dd><a href=${href("workflows", parent.id)}>${parent.id}</a>
    <span class="muted"> step <code>${parent.stepId}</code></span></dd></div>`;
}

/** One line per step that started a child workflow: the step, the child's page and where the child stands. */
export function ChildLinks({ steps }) {
  const parents = steps.filter((step) => step.child);
  if (parents.length === 0) return null;
  return html`
    <ul class="child-links" aria-label="Child workflows">
      ${parents.map(
        ({ id, child }) => html`<li key=${id} data-testid=${`child-of-${id}`}>
          <code>${id}</code> started <a href=${href("workflows", child.id)}>${child.id}</a>
          <span class=${`status ${child.status}`}>${statusLabel(child.status)}</span>
        </li>`,
      )}
    </ul>
  `;
}
