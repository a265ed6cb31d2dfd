// The circuit breakers of the tenant's target hosts (GET /v1/targets): each host that has seen a transient failure,
// whether its breaker is closed, open (its calls parked until it closes) or half-open (one probe let through), its
// failures in a row and its parked attempts. Open breakers come first and are named above the table; the page
// refreshes itself, since a breaker opens and closes on its own.
import { api, query } from "../api.js";
import { clock } from "../format.js";
import { html } from "../html.js";
import { REFRESH_MS, useLive } from "../live.js";
import { href } from "../router.js";
import { Pager, readTrail, trailParam } from "../list/paging.js";
import { stateWords, TargetTable, unhealthy } from "../list/target-table.js";

const always = () => true;

export function TargetsPage({ route }) {
  const trail = readTrail(route.search);
  const load = async () => ({ ...(await api(`/v1/targets${query({ cursor: trail.at(-1) })}`)), loadedAt: Date.now() });
  const { data, error, loading } = useLive(load, [route.search.toString()], { active: always });
  return html`
    <div class="list-head">
      <h1>Targets</h1>
      ${data && html`<span class="muted live-note" data-testid="live-note">refreshing every ${REFRESH_MS / 1_000} s · as of ${clock(data.loadedAt)}</span>`}
    </div>
    ${error && html`<p class="error" role="alert">${error.message}</p>`}
    ${!data && loading && html`<p class="muted">Loading targets…</p>`}
    ${data && html`<${OpenBreakers} targets=${data.targets} />`}
    ${data && data.targets.length === 0 && html`<${NoTargets} />`}
    ${data && data.targets.length > 0 && html`<${TargetTable} targets=${data.targets} now=${data.loadedAt} />`}
    <${Pager} trail=${trail} nextCursor=${data?.nextCursor} linkTo=${(next) => href("targets", { after: trailParam(next) })} label="Target pages" />
  `;
}

/** Said once above the table, so an open breaker is seen before the rows are read. */
function OpenBreakers({ targets }) {
  const open = targets.filter(unhealthy);
  if (open.length === 0) return null;
  const one = open.length === 1;
  const names = open.map((target, i) => html`${i > 0 ? ", " : ""}<code>${target.host}</code> (${stateWords(target.state)})`);
  const wait = one ? "Steps calling it wait, parked, until it closes." : "Steps calling them wait, parked, until they close.";
  return html`<p class="breaker-warning" role="alert" data-testid="open-breakers">${one ? "A breaker is" : `${open.length} breakers are`} not closed: ${names}. ${wait}</p>`;
}

function NoTargets() {
  return html`<p class="empty" role="status">
    No target host has failed lately. A host is listed here once a step's call to it fails for a reason worth retrying (a 5xx, a 429, a
    timeout, no answer); after <code>breaker.failures</code> such failures in a row (5 unless the definition says otherwise) its breaker
    opens, and the steps that call it wait until it closes.
  </p>`;
}
