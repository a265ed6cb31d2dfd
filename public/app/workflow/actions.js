// The operator actions the workflow's state allows, each behind a confirmation. Which ones show is the API's
// commands' table (generated/contract.js: pause a running workflow, redrive an ended one, retry or skip a failed
// step while it needs attention…); where the view cannot tell (a cancel during a compensation), the button shows
// and the API's 409 says why not. This module keeps only the words of each button.
import { useState } from "preact/hooks";
import { api } from "../api.js";
import { ConfirmButton } from "../confirm.js";
import { OPERATOR_COMMANDS } from "../generated/contract.js";
import { html } from "../html.js";
import { isTerminal } from "../statuses.js";

/**
 * Which commands a workflow in this state takes, by the table's names: `true` for a workflow command, the ids of
 * the steps it applies to for a step command. Events are not commands: any workflow that has not ended takes one.
 */
export function allowedActions(view) {
  const allowed = Object.entries(OPERATOR_COMMANDS).map(([name, command]) => {
    const now = command.workflowStatuses.includes(view.status);
    if (!command.stepStatuses) return [name, now];
    return [name, now ? view.steps.filter((step) => command.stepStatuses.includes(step.status)).map((step) => step.id) : []];
  });
  return { ...Object.fromEntries(allowed), sendEvent: !isTerminal(view.status) };
}

/** Whether any action applies: an ended workflow that cannot be redriven takes none. */
export function anyActionAllowed(view) {
  return Object.values(allowedActions(view)).some((value) => (Array.isArray(value) ? value.length > 0 : value));
}

/**
 * POSTs one of the table's commands for this workflow (and step), at the command's own path, with the reason the
 * operator gave (every command takes one: the history keeps it with the token's name).
 */
function runCommand(name, view, { stepId, body = {}, reason } = {}) {
  const path = OPERATOR_COMMANDS[name].path.replace("{id}", encodeURIComponent(view.id)).replace("{stepId}", encodeURIComponent(stepId ?? ""));
  return api(path, { method: "POST", body: withReason(body, reason) });
}

function withReason(body, reason) {
  return reason === undefined ? body : { ...body, reason };
}

export function WorkflowActions({ view, onDone }) {
  const allowed = allowedActions(view);
  const post = (name) => (_input, reason) => runCommand(name, view, { reason });
  // Each dialog names the workflow and its buttons say what they do: "Cancel workflow" or "Keep running".
  const command = (verb) => ({ label: verb, title: `${verb} workflow ${view.id}?`, confirmLabel: `${verb} workflow`, dismissLabel: keepWords(view), onDone, askReason: true });
  // Retry and skip apply to the same failed steps; each step gets its row of the buttons it takes.
  const steps = [...new Set([...allowed.retryStep, ...allowed.skipStep])];
  return html`
    <div class="wf-actions" data-testid="actions">
      ${steps.map((stepId) => html`<${StepActions} key=${stepId} view=${view} stepId=${stepId} allowed=${allowed} onDone=${onDone} />`)}
      <div class="toolbar">
        ${allowed.pause && html`<${ConfirmButton} ...${command("Pause")} testId="pause" message="Nothing new is dispatched and no sleep or wait completes until you resume it. Running attempts go on." run=${post("pause")} />`}
        ${allowed.resume && html`<${ConfirmButton} ...${command("Resume")} testId="resume" message="The workflow runs again; what fell due while it was paused happens now." run=${post("resume")} />`}
        ${allowed.sendEvent && html`<${SendEvent} view=${view} onDone=${onDone} />`}
        ${allowed.redrive && html`<${Redrive} view=${view} onDone=${onDone} />`}
        ${allowed.compensate && html`<${ConfirmButton} ...${command("Compensate")} testId="compensate" danger message="Give up: the compensations of the steps that succeeded run in reverse order, then the workflow ends compensated." run=${post("compensate")} />`}
        ${allowed.cancel && html`<${ConfirmButton} ...${command("Cancel")} testId="cancel" danger message=${cancelWords(view)} run=${post("cancel")} />`}
        ${allowed.terminate &&
        html`<${ConfirmButton} ...${command("Terminate")} testId="terminate" danger message="Stop now: running attempts are fenced and nothing is compensated. The reason is also the workflow's error."
          run=${post("terminate")} />`}
      </div>
    </div>
  `;
}

/** The button that leaves the workflow as it is, in words that fit its state (never "Cancel", which is an action). */
export function keepWords(view) {
  if (view.status === "scheduled") return "Keep it scheduled";
  if (view.status === "paused") return "Keep it paused";
  return "Keep running";
}

function cancelWords(view) {
  if (view.status === "scheduled") return "It has not started: it ends cancelled at once, and nothing of it runs.";
  return "Running attempts are fenced and the steps that succeeded are compensated; the workflow ends cancelled.";
}

function StepActions({ view, stepId, allowed, onDone }) {
  return html`
    <div class="toolbar step-actions" data-testid=${`step-actions-${stepId}`}>
      <span>Step <code>${stepId}</code> failed:</span>
      ${allowed.retryStep.includes(stepId) &&
      html`<${ConfirmButton} label="Retry step" title=${`Retry step ${stepId}?`} confirmLabel="Retry step" dismissLabel="Back" testId=${`retry-${stepId}`} onDone=${onDone} askReason
        message="The step gets a fresh attempt budget and runs again." run=${(_input, reason) => runCommand("retryStep", view, { stepId, reason })} />`}
      ${allowed.skipStep.includes(stepId) &&
      html`<${ConfirmButton} label="Skip with output…" title=${`Skip step ${stepId}?`} confirmLabel="Skip step" dismissLabel="Back" testId=${`skip-${stepId}`} onDone=${onDone} askReason
        message="The step counts as succeeded with this output, and the steps after it run (a failed compensation counts as done)."
        field=${{ label: "Output (JSON; empty for null)", initial: "{}", rows: 4 }}
        run=${(text, reason) => runCommand("skipStep", view, { stepId, body: optionalJson(text, "output"), reason })} />`}
    </div>
  `;
}

function SendEvent({ view, onDone }) {
  const awaited = view.steps.find((step) => step.waitingFor)?.waitingFor.event ?? "";
  const [name, setName] = useState(undefined);
  const event = name ?? awaited;
  const run = (payload, reason) => {
    if (!event.trim()) throw new Error("Name the event.");
    return api(`${workflowPath(view.id)}/events`, { method: "POST", body: withReason({ event: event.trim(), ...optionalJson(payload, "payload") }, reason) });
  };
  return html`
    <${ConfirmButton} label="Send event…" title=${`Send an event to workflow ${view.id}`} confirmLabel="Send event" dismissLabel="Back" testId="send-event" onDone=${onDone} run=${run} askReason
      message=${awaited ? `A step waits for "${awaited}". An event no step waits for yet is kept in the inbox.` : "No step waits for an event now: it is kept in the inbox for the first wait that starts later."}
      field=${{ label: "Payload (JSON, optional)", initial: "{}", rows: 4 }}>
      <label>Event name <input name="event" value=${event} onInput=${(e) => setName(e.currentTarget.value)} /></label>
    </${ConfirmButton}>
  `;
}

function Redrive({ view, onDone }) {
  const [fromStep, setFromStep] = useState("");
  const run = (_input, reason) => runCommand("redrive", view, { body: fromStep ? { fromStep } : {}, reason });
  return html`
    <${ConfirmButton} label="Redrive…" title=${`Redrive workflow ${view.id}?`} testId="redrive" onDone=${onDone} run=${run} confirmLabel="Redrive workflow" dismissLabel="Back" askReason
      message="Steps that did not succeed run again with fresh attempt budgets; the outputs of the others are kept.">
      <label>From step (optional: that step and everything after it run again)
        <select name="fromStep" value=${fromStep} onChange=${(e) => setFromStep(e.currentTarget.value)}>
          <option value="">— only what did not succeed —</option>
          ${view.steps.map((step) => html`<option value=${step.id}>${step.id} (${step.status})</option>`)}
        </select>
      </label>
    </${ConfirmButton}>
  `;
}

/** `{ [key]: parsed }` from a JSON text field, `{}` when it is empty; a clear error when it is not JSON. */
function optionalJson(text, key) {
  if (!text.trim()) return {};
  try {
    return { [key]: JSON.parse(text) };
  } catch (error) {
    throw new Error(`The ${key} is not valid JSON: ${error.message}`, { cause: error });
  }
}

function workflowPath(id) {
  return `/v1/workflows/${encodeURIComponent(id)}`;
}
