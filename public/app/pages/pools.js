// The tenant's worker pools (GET /v1/pools): how many tasks wait in each and for how long, how many run, and
// which of the user's own workers polled it lately. Workers come and go on their own, so the page refreshes
// for as long as it is open.
import { api } from "../api.js";
import { clock } from "../format.js";
import { html } from "../html.js";
import { REFRESH_MS, useLive } from "../live.js";
import { isStarved, PoolTable, WORKER_SEEN_MINUTES, workerCommand } from "../list/pool-table.js";

const always = () => true;

export function PoolsPage() {
  const load = async () => ({ ...(await api("/v1/pools")), loadedAt: Date.now() });
  const { data, error, loading } = useLive(load, [], { active: always });
  return html`
    <div class="list-head">
      <h1>Pools</h1>
      ${data && html`<span class="muted live-note" data-testid="live-note">refreshing every ${REFRESH_MS / 1_000} s · as of ${clock(data.loadedAt)}</span>`}
    </div>
    ${error && html`<p class="error" role="alert">${error.message}</p>`}
    ${!data && loading && html`<p class="muted">Loading pools…</p>`}
    ${data && html`<${Starved} pools=${data.pools} />`}
    ${data && data.pools.length === 0 && html`<${NoPools} />`}
    ${data && data.pools.length > 0 && html`<${PoolTable} pools=${data.pools} now=${data.loadedAt} />`}
  `;
}

/** Said once above the table as well, so a starved pool further down is not missed. */
function Starved({ pools }) {
  const starved = pools.filter(isStarved);
  if (starved.length === 0) return null;
  const one = starved.length === 1;
  const names = starved.map((pool, i) => html`${i > 0 ? ", " : ""}<code>${pool.name}</code>`);
  return html`<p class="pool-warning" role="alert" data-testid="starved-pools">
    ${one ? "Pool" : "Pools"} ${names} ${one ? "has" : "have"} pending tasks and no worker seen in the last ${WORKER_SEEN_MINUTES} min.
  </p>`;
}

function NoPools() {
  return html`<p class="empty" role="status">
    No pools yet. A step whose action is <code>{"type": "worker", "pool": "NAME"}</code> runs on a machine of yours: start a worker there with
    <code>${workerCommand()}</code>, and its pool is listed here with its queue and its workers.
  </p>`;
}
