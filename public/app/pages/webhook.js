// One webhook (#/webhooks/<id>): where it posts, which events it takes, and its recent deliveries, newest first
// (GET /v1/webhooks/{id}/deliveries), refreshed while the page is open since deliveries come with every event.
import { api } from "../api.js";
import { clock } from "../format.js";
import { html } from "../html.js";
import { REFRESH_MS, useLive } from "../live.js";
import { href } from "../router.js";
import { DeliveryTable } from "../webhooks/delivery-table.js";
import { EventFilters } from "../webhooks/event-filters.js";

const always = () => true;

export function WebhookPage({ id }) {
  const base = `/v1/webhooks/${encodeURIComponent(id)}`;
  const webhook = useLive(() => api(base), [base]);
  const loadDeliveries = async () => ({ ...(await api(`${base}/deliveries`)), loadedAt: Date.now() });
  const deliveries = useLive(loadDeliveries, [base], { active: always });
  if (webhook.error?.status === 404) {
    return html`<p class="error" role="alert">No webhook "${id}" for this token's tenant.</p><p><a href=${href("webhooks")}>Back to the webhooks</a></p>`;
  }
  const data = deliveries.data;
  return html`
    <div class="webhook-page" data-testid="webhook-page">
      <p class="crumbs"><a href=${href("webhooks")}>Webhooks</a> / ${id}</p>
      <h1><code>${id}</code></h1>
      ${webhook.error && html`<p class="error" role="alert">${webhook.error.message}</p>`}
      ${webhook.data && html`<${Facts} webhook=${webhook.data} />`}
      <section class="panel">
        <div class="list-head">
          <h2>Recent deliveries</h2>
          ${data && html`<span class="muted live-note" data-testid="live-note">refreshing every ${REFRESH_MS / 1_000} s · as of ${clock(data.loadedAt)}</span>`}
        </div>
        ${deliveries.error && html`<p class="error" role="alert">${deliveries.error.message}</p>`}
        ${!data && deliveries.loading && html`<p class="muted">Loading deliveries…</p>`}
        ${data && html`<${Failing} deliveries=${data.deliveries} />`}
        ${data && data.deliveries.length === 0 && html`<p class="empty" role="status">No deliveries yet: the next event of a workflow that these filters match is posted here.</p>`}
        ${data && data.deliveries.length > 0 && html`<${DeliveryTable} deliveries=${data.deliveries} now=${data.loadedAt} />`}
      </section>
    </div>
  `;
}

function Facts({ webhook }) {
  return html`
    <dl class="facts">
      <div><dt>URL</dt><dd class="mono url" data-testid="webhook-url">${webhook.url}</dd></div>
      <div><dt>Events</dt><dd><${EventFilters} events=${webhook.events} /></dd></div>
      <div><dt>Created</dt><dd>${clock(webhook.createdAt)}</dd></div>
      <div><dt>Updated</dt><dd>${clock(webhook.updatedAt)}</dd></div>
    </dl>
  `;
}

/** Said once above the table, so a receiver that fails is seen before the rows are read. */
function Failing({ deliveries }) {
  const failing = deliveries.filter((delivery) => delivery.status === "failing").length;
  const failed = deliveries.filter((delivery) => delivery.status === "failed").length;
  if (failing === 0 && failed === 0) return null;
  const parts = [
    failing > 0 && `${failing} ${failing === 1 ? "delivery is" : "deliveries are"} failing and being retried`,
    failed > 0 && `${failed} ${failed === 1 ? "was" : "were"} given up`,
  ].filter(Boolean);
  return html`<p class="delivery-warning" role="alert" data-testid="failing-deliveries">${parts.join("; ")}.</p>`;
}
