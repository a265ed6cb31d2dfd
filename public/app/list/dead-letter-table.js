// The rows of the dead letters page: when each message was first seen, what it named, why it can never start (the
// issues of a refused body one per line) and the body as sent.
import { clock } from "../format.js";
import { html } from "../html.js";
import { TableScroll } from "./table-scroll.js";
import { relative } from "./relative-time.js";

export function DeadLetterTable({ deadLetters, now }) {
  return html`
    <${TableScroll} label="Dead letters">
      <table class="dead-letter-list" data-testid="dead-letter-list">
        <thead>
          <tr><th>First seen</th><th>Tenant</th><th>Workflow</th><th>Error</th><th>Deliveries</th><th>Message</th></tr>
        </thead>
        <tbody>
          ${deadLetters.map((letter) => html`<${DeadLetterRow} key=${letter.messageId} letter=${letter} now=${now} />`)}
        </tbody>
      </table>
    </${TableScroll}>
  `;
}

function DeadLetterRow({ letter, now }) {
  return html`
    <tr data-message=${letter.messageId}>
      <td title=${new Date(letter.firstSeenAt).toISOString()}>${clock(letter.firstSeenAt)}<div class="muted">${relative(Math.min(letter.firstSeenAt, now), now)}</div></td>
      <td class="mono" data-testid="dead-letter-tenant">${letter.tenant ?? html`<span class="muted">none</span>`}</td>
      <td class="mono" data-testid="dead-letter-workflow">${letter.workflowId ?? html`<span class="muted">—</span>`}</td>
      <td data-testid="dead-letter-error"><${ErrorCell} error=${letter.error} /></td>
      <td data-testid="dead-letter-attempts">${letter.attempts}</td>
      <td><${Body} letter=${letter} /></td>
    </tr>
  `;
}

function ErrorCell({ error }) {
  const issues = (error.details ?? []).filter((issue) => Array.isArray(issue?.path));
  return html`
    <code class="error">${error.code}</code> ${error.message}
    ${issues.length > 1 && html`<ul class="issues">${issues.map((issue, i) => html`<li key=${i}><code>${issue.path.join(".") || "(the message)"}</code>: ${issue.message}</li>`)}</ul>`}
  `;
}

function Body({ letter }) {
  return html`
    <details>
      <summary>${letter.messageId}</summary>
      <pre data-testid="dead-letter-body">${pretty(letter.body)}</pre>
      ${letter.bodyTruncated && html`<p class="muted" data-testid="dead-letter-truncated">Cut at ${letter.body.length} characters.</p>`}
    </details>
  `;
}

/** The body indented when it is whole JSON; as kept when it was cut. */
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
