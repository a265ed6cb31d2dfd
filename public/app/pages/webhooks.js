// The tenant's webhooks (GET /v1/webhooks): where each posts and which events it takes. A webhook's own page
// (#/webhooks/<id>) lists its recent deliveries, refreshed while it is open, so a receiver that fails stands out with
// its last answer and about when it is tried again.
import { api } from "../api.js";
import { clock } from "../format.js";
import { html } from "../html.js";
import { useLive } from "../live.js";
import { href } from "../router.js";
import { EventFilters } from "../webhooks/event-filters.js";
import { WebhookPage } from "./webhook.js";
import { TableScroll } from "../list/table-scroll.js";

export function WebhooksPage({ route }) {
  const id = route.params[0];
  return id ? html`<${WebhookPage} id=${id} />` : html`<${WebhookList} />`;
}

/** Webhooks change only when someone puts or deletes one: read once, and again on a reload. */
function WebhookList() {
  const { data, error, loading } = useLive(() => api("/v1/webhooks"), []);
  return html`
    <div class="list-head"><h1>Webhooks</h1></div>
    ${error && html`<p class="error" role="alert">${error.message}</p>`}
    ${!data && loading && html`<p class="muted">Loading webhooks…</p>`}
    ${data && data.webhooks.length === 0 && html`<${NoWebhooks} />`}
    ${data && data.webhooks.length > 0 && html`<${WebhookTable} webhooks=${data.webhooks} />`}
  `;
}

function WebhookTable({ webhooks }) {
  return html`
    <${TableScroll} label="Webhooks">
      <table class="webhook-list stack-narrow" data-testid="webhook-list">
        <thead><tr><th>Webhook</th><th>URL</th><th>Events</th><th>Updated</th></tr></thead>
        <tbody>
          ${webhooks.map(
            (webhook) => html`<tr key=${webhook.id} data-webhook=${webhook.id}>
              <td data-label="Webhook"><a class="mono" href=${href("webhooks", webhook.id)}>${webhook.id}</a></td>
              <td data-label="URL" class="mono url" data-testid="webhook-url">${webhook.url}</td>
              <td data-label="Events" data-testid="webhook-events"><${EventFilters} events=${webhook.events} /></td>
              <td data-label="Updated" title=${new Date(webhook.updatedAt).toISOString()}>${clock(webhook.updatedAt)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>
  `;
}

function NoWebhooks() {
  return html`<p class="empty" role="status">
    No webhooks yet. Subscribe a URL to your workflows' events with
    <code>shepherd webhooks put NAME --endpoint https://… --events 'workflow.*'</code> (or <code>PUT /v1/webhooks/NAME</code>), and its
    deliveries are listed here.
  </p>`;
}
