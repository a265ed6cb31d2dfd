// What one attempt sent and what came back, from GET /v1/workflows/{id}/steps/{stepId}/attempts/{n}: read when the
// attempt is opened in the attempts table (the workflow's view carries no bodies), and again when its status moves.
import { useMemo } from "preact/hooks";
import { api } from "../api.js";
import { html } from "../html.js";
import { useLive } from "../live.js";

export function AttemptExchange({ workflowId, stepId, n, status }) {
  const path = `/v1/workflows/${encodeURIComponent(workflowId)}/steps/${encodeURIComponent(stepId)}/attempts/${n}`;
  const load = useMemo(() => () => api(path), [path]);
  const { data, error } = useLive(load, [load, status]);
  const testId = `exchange-${stepId}-${n}`;
  if (error) return html`<p class="error" role="alert" data-testid=${testId}>Reading the attempt failed: ${error.message}</p>`;
  if (!data) return html`<p class="muted" data-testid=${testId}>Reading the attempt…</p>`;
  return html`
    <div class="exchange" data-testid=${testId}>
      ${data.verify && html`<${Call} title="Verify, asked first" call=${data.verify} testId="verify" />`}
      ${data.request
        ? html`<${Call} title=${data.verify ? "Then the action" : undefined} call=${data} testId="call" />`
        : !data.verify && html`<p class="muted">${nothingWords(data.status)}</p>`}
    </div>
  `;
}

function nothingWords(status) {
  if (status === "running" || status === "scheduled") return "Nothing recorded yet: what it sent and what came back are kept when its agent reports.";
  return "Nothing recorded of what it sent: its agent never reported (a timeout), or the attempt is older than the step's latest 10.";
}

function Call({ title, call, testId }) {
  const { request, response } = call;
  return html`
    ${title && html`<h4>${title}</h4>`}
    <div class="exchange-call" data-testid=${testId}>
      <section class="exchange-request" data-testid="request">
        <h5>Request</h5>
        <p class="mono target">${request.pool === undefined ? `${request.method ?? ""} ${request.url ?? ""}` : `task handed to pool ${request.pool}`}</p>
        <${Headers} headers=${request.headers} />
        <${Body} body=${request.body} />
      </section>
      <section class="exchange-response" data-testid="response">
        <h5>Response</h5>
        ${response
          ? html`<p class="mono target" data-testid="response-status">${response.status === undefined ? "reported by the worker" : `HTTP ${response.status}`}</p>
              <${Headers} headers=${response.headers} />
              <${Body} body=${response.body} />`
          : html`<p class="muted" data-testid="response-status">No answer: the attempt's error says why.</p>`}
      </section>
    </div>
  `;
}

function Headers({ headers }) {
  const entries = Object.entries(headers ?? {});
  if (entries.length === 0) return null;
  return html`<dl class="headers">${entries.map(([name, value]) => html`<dt>${name}</dt><dd class=${value === "[redacted]" ? "redacted" : ""}>${value}</dd>`)}</dl>`;
}

/** The body, pretty-printed when it is JSON; a body cut at its first 4 KiB says so. */
function Body({ body }) {
  if (!body) return html`<p class="muted">No body.</p>`;
  return html`
    <pre data-testid="body">${pretty(body.text)}</pre>
    ${body.truncated && html`<p class="muted truncated" data-testid="truncated">Only its first ${byteCount(body.text)} bytes are kept, of ${body.bytes}.</p>`}
  `;
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function byteCount(text) {
  return new TextEncoder().encode(text).byteLength;
}
