// A webhook's deliveries, one row per event: which event of which workflow, how it went (delivered, failing and
// being retried, or given up), how many tries, the receiver's last answer or error, and for a failing one about when
// it goes again (the service's estimate: the workflow backs off 1 s, 2 s … 60 s, give or take 20 %).
import { clock } from "../format.js";
import { html } from "../html.js";
import { relative } from "../list/relative-time.js";
import { href } from "../router.js";
import { TableScroll } from "../list/table-scroll.js";

export function DeliveryTable({ deliveries, now }) {
  return html`
    <${TableScroll} label="Deliveries">
      <table class="delivery-list stack-narrow" data-testid="delivery-list">
        <thead>
          <tr><th>Event</th><th>Workflow</th><th>Status</th><th>Attempts</th><th>Last answer or error</th><th>Last try</th><th>Next retry</th></tr>
        </thead>
        <tbody>
          ${deliveries.map((delivery) => html`<${DeliveryRow} key=${delivery.eventId} delivery=${delivery} now=${now} />`)}
        </tbody>
      </table>
    <//>
  `;
}

function DeliveryRow({ delivery, now }) {
  return html`
    <tr data-event=${delivery.eventId} data-status=${delivery.status} class=${delivery.status}>
      <td data-label="Event"><code>${delivery.type}</code><div class="muted mono">${delivery.eventId}</div></td>
      <td data-label="Workflow"><a class="mono" href=${href("workflows", delivery.workflowId)}>${delivery.workflowId}</a></td>
      <td data-label="Status" data-testid="delivery-status"><${Status} status=${delivery.status} /></td>
      <td data-label="Attempts" data-testid="delivery-attempts">${delivery.attempts}</td>
      <td data-label="Last answer" data-testid="delivery-answer"><${Answer} delivery=${delivery} /></td>
      <td data-label="Last try" title=${new Date(delivery.lastAt).toISOString()}>${clock(delivery.lastAt)}<div class="muted">${relative(Math.min(delivery.lastAt, now), now)}</div></td>
      <td data-label="Next retry" data-testid="delivery-next"><${NextRetry} delivery=${delivery} now=${now} /></td>
    </tr>
  `;
}

/** A delivered event reads quietly; a failing one (still retried) is marked in amber, a given-up one in red. */
function Status({ status }) {
  if (status === "delivered") return html`<span class="quiet-state"><span class="dot completed" aria-hidden="true"></span>delivered</span>`;
  return html`<span class=${`status delivery ${status}`}>${status}</span>`;
}

/** "HTTP 503", with the error the service recorded (no answer, a refused target) under it. */
function Answer({ delivery }) {
  return html`
    ${delivery.lastStatus === undefined ? html`<span class="muted">no answer</span>` : html`HTTP ${delivery.lastStatus}`}
    ${delivery.lastError && html`<div class="error delivery-error" data-testid="delivery-error">${delivery.lastError}</div>`}
  `;
}

function NextRetry({ delivery, now }) {
  if (delivery.status === "delivered") return html`<span class="muted">—</span>`;
  if (delivery.status === "failed") return html`<span class="muted">none: given up</span>`;
  if (delivery.nextAttemptAt === undefined) return html`<span class="muted">soon</span>`;
  const due = delivery.nextAttemptAt <= now;
  return html`<span title=${new Date(delivery.nextAttemptAt).toISOString()}>about ${clock(delivery.nextAttemptAt)}</span>
    <div class="muted">${due ? "due now" : relative(delivery.nextAttemptAt, now)}</div>`;
}
