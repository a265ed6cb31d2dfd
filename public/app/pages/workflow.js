// One workflow (#/workflows/<id>): where it stands and why, its step graph, the timeline of its attempts, its
// history and the operator actions its state allows. It refreshes itself until the workflow ends.
import { useEffect, useMemo, useState } from "preact/hooks";
import { html } from "../html.js";
import { clock } from "../format.js";
import { REFRESH_MS, useLive } from "../live.js";
import { href } from "../router.js";
import { anyActionAllowed, WorkflowActions } from "../workflow/actions.js";
import { isTerminal } from "../statuses.js";
import { AttemptsTable } from "../workflow/attempts-table.js";
import { Diagnosis } from "../workflow/diagnosis.js";
import { StepGraph } from "../workflow/graph.js";
import { WorkflowHeader } from "../workflow/header.js";
import { History } from "../workflow/history.js";
import { ChildLinks } from "../workflow/links.js";
import { createWorkflowLoader } from "../workflow/load.js";
import { MapSteps } from "../workflow/map-step.js";
import { workflowStructure } from "../workflow/structure.js";
import { Timeline } from "../workflow/timeline.js";
import { withPools } from "../workflow/worker-pool.js";

/** Keep refreshing while the workflow is open, and through a failed refresh (a blip must not stop the page). */
const stillOpen = (data) => data === undefined || !isTerminal(data.view.status);

export function WorkflowPage({ id }) {
  const load = useMemo(() => createWorkflowLoader(id), [id]);
  const { data, error, reload } = useLive(load, [load], { active: stillOpen });
  const [selected, select] = useSelectedStep(id);
  // Until the first load of another workflow lands, the previous one's data is not this page's.
  if (!data || data.view.id !== id) return html`<${Pending} id=${id} error=${error} />`;
  const { diagnosis, events, pools, loadedAt } = data;
  const view = withPools(data.view, diagnosis);
  const steps = workflowStructure(view);
  const actionable = anyActionAllowed(view);
  return html`
    <div class="workflow-page" data-testid="workflow-page" data-status=${view.status}>
      <${WorkflowHeader} view=${view} now=${loadedAt} />
      ${error && html`<p class="error" role="alert">Refreshing failed: ${error.message}</p>`}
      <div class=${actionable ? "wf-columns" : ""}>
        <section class="panel">
          <h2>Diagnosis <${LiveNote} view=${view} loadedAt=${loadedAt} /></h2>
          <${Diagnosis} view=${view} diagnosis=${diagnosis} pools=${pools} now=${loadedAt} />
          ${!actionable && html`<p class="muted" data-testid="no-actions">No operator action applies to a ${view.status} workflow.</p>`}
        </section>
        ${actionable &&
        html`<section class="panel">
          <h2>Operator actions</h2>
          <${WorkflowActions} view=${view} onDone=${reload} />
        </section>`}
      </div>
      <section class="panel">
        <h2>Steps</h2>
        <${StepGraph} steps=${steps} selected=${selected} onSelect=${select} />
        <${ChildLinks} steps=${view.steps} />
      </section>
      <${MapSteps} view=${view} />
      <section class="panel">
        <h2>Timeline</h2>
        <${Timeline} view=${view} events=${events} now=${loadedAt} selected=${selected} onSelect=${select} />
        <${AttemptsTable} view=${view} events=${events} now=${loadedAt} selected=${selected} />
      </section>
      <section class="panel">
        <h2>History</h2>
        <${History} events=${events} onSelectStep=${select} />
      </section>
    </div>
  `;
}

/** The step picked in the graph (or elsewhere): highlighted, and its timeline row scrolled into view. */
function useSelectedStep(id) {
  const [selected, setSelected] = useState(undefined);
  const [scrollTo, setScrollTo] = useState(undefined);
  useEffect(() => setSelected(undefined), [id]);
  useEffect(() => {
    if (scrollTo === undefined) return;
    document.getElementById(`timeline-step-${scrollTo.stepId}`)?.scrollIntoView({ behavior: "smooth", block: "center" });
  }, [scrollTo]);
  // A fresh object each time, so picking the same step again scrolls to it again.
  const select = (stepId) => {
    setSelected(stepId);
    setScrollTo({ stepId });
  };
  return [selected, select];
}

function LiveNote({ view, loadedAt }) {
  const text = isTerminal(view.status) ? `ended; as of ${clock(loadedAt)}` : `live: refreshing every ${REFRESH_MS / 1_000} s, as of ${clock(loadedAt)}`;
  return html`<span class="muted live-note" data-testid="live-note">${text}</span>`;
}

function Pending({ id, error }) {
  if (!error) return html`<p class="muted">Loading workflow <code>${id}</code>…</p>`;
  const text = error.status === 404 ? `No workflow "${id}" for this token's tenant.` : error.message;
  return html`
    <p class="error" role="alert">${text}</p>
    <p><a href=${href("workflows")}>Back to the workflows</a></p>
  `;
}
