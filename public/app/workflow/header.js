// The workflow at a glance: who it is, where it stands, how long it took, and what came out of it (its output,
// or its error with the step that failed and how).
import { html } from "../html.js";
import { clock, duration } from "../format.js";
import { href } from "../router.js";
import { ParentFact } from "./links.js";
import { errorWords } from "./timeline-model.js";
import { statusLabel } from "../statuses.js";

/** How much of an input or output its folded line shows. */
const PREVIEW_CHARS = 90;

export function WorkflowHeader({ view, now }) {
  const definition = view.definition;
  return html`
    <header class="wf-head">
      <p class="crumbs"><a href=${href("workflows")}>Workflows</a> / <a href=${href("workflows", { q: view.name })}>${view.name}</a></p>
      <h1><code>${view.id}</code> <span class=${`status ${view.status}`} data-testid="workflow-status">${statusLabel(view.status)}</span></h1>
      <dl class="facts">
        <div><dt>Definition</dt><dd data-testid="workflow-definition"><${DefinitionFact} definition=${definition} name=${view.name} /></dd></div>
        <${ParentFact} parent=${view.parent} />
        <div><dt>Created</dt><dd>${clock(view.createdAt)}</dd></div>
        ${view.startAt !== undefined && html`<div data-testid="workflow-start"><dt>${view.status === "scheduled" ? "Starts" : "Scheduled for"}</dt><dd>${clock(view.startAt)}</dd></div>`}
        <div><dt>Ended</dt><dd>${clock(view.endedAt)}</dd></div>
        <div><dt>Duration</dt><dd>${view.status === "scheduled" ? "not started yet" : html`${duration((view.endedAt ?? now) - view.createdAt)}${view.endedAt === undefined ? " so far" : ""}`}</dd></div>
        ${view.redriveCount > 0 && html`<div><dt>Redriven</dt><dd>${view.redriveCount}×</dd></div>`}
        ${view.attentionDeadline && html`<div><dt>Operator deadline</dt><dd>${clock(view.attentionDeadline)}</dd></div>`}
        ${view.pendingEvents.length > 0 && html`<div><dt>Inbox</dt><dd>${view.pendingEvents.map((event) => event.event).join(", ")}</dd></div>`}
      </dl>
      <${Outcome} view=${view} />
    </header>
  `;
}

/**
 * The definition the workflow runs: a published one links to that version's page (its JSON and graph); an inline one
 * was never published, so there is no page to link to.
 */
function DefinitionFact({ definition, name }) {
  const hash = definition?.hash && html` <span class="muted mono" title=${definition.hash}>${definition.hash.slice(0, 10)}</span>`;
  if (!definition?.version) return html`${definition?.name ?? name} (inline)${hash}`;
  return html`<a href=${href("definitions", definition.name, String(definition.version))}>${definition.name} v${definition.version}${hash}</a>`;
}

function Outcome({ view }) {
  return html`
    <${Failure} view=${view} />
    <div class="wf-data">
      <${Json} label="Input" value=${view.input} testId="workflow-input" />
      <${Json} label="Output" value=${view.output} testId="workflow-output" />
    </div>
  `;
}

/** The workflow's error and each failed step's: which step, after how many attempts, and what the remote said. */
function Failure({ view }) {
  const failedSteps = view.steps.filter((step) => step.status === "failed" && step.error);
  if (!view.error && failedSteps.length === 0) return null;
  return html`
    <div class="wf-error" role="alert" data-testid="workflow-error">
      ${view.error && html`<p><strong>${view.status === "terminated" ? "Terminated" : "Error"}:</strong> ${errorWords(view.error)}</p>`}
      ${failedSteps.map(
        (step) => html`<p data-testid=${`step-error-${step.id}`}>
          <strong>Step <code>${step.id}</code></strong>${step.attempts.at(-1)?.kind === "compensation" ? " (its compensation)" : ""}
          ${` failed after ${step.attempts.length} attempt${step.attempts.length === 1 ? "" : "s"}: `}${errorWords(step.error)}
        </p>`,
      )}
    </div>
  `;
}

/** Folded to a one-line preview; unfolded, the whole value laid out. */
function Json({ label, value, testId }) {
  if (value === undefined || value === null) return null;
  const line = JSON.stringify(value);
  return html`
    <details data-testid=${testId}>
      <summary>${label} <code class="muted">${line.length > PREVIEW_CHARS ? `${line.slice(0, PREVIEW_CHARS - 1)}…` : line}</code></summary>
      <pre>${JSON.stringify(value, null, 2)}</pre>
    </details>
  `;
}
