// The STARTS queue's dead letters (GET /v1/starts/dead-letters): the start messages that could never start, each
// with its error and what was sent, newest first. Nothing retries them: the operator fixes the producer (or the
// definition) and sends the message again.
import { api, query } from "../api.js";
import { clock } from "../format.js";
import { html } from "../html.js";
import { useLive } from "../live.js";
import { href } from "../router.js";
import { DeadLetterTable } from "../list/dead-letter-table.js";
import { Pager, readTrail, trailParam } from "../list/paging.js";

const PAGE_SIZE = 50;
/** Dead letters are rare and not urgent to the second: a slow refresh shows a new one soon enough. */
const REFRESH_MS = 10_000;

const always = () => true;

export function DeadLettersPage({ route }) {
  const trail = readTrail(route.search);
  const load = async () => ({ ...(await api(`/v1/starts/dead-letters${query({ limit: PAGE_SIZE, cursor: trail.at(-1) })}`)), loadedAt: Date.now() });
  const { data, error, loading } = useLive(load, [route.search.toString()], { active: always, everyMs: REFRESH_MS });
  return html`
    <div class="list-head">
      <h1>Dead letters</h1>
      ${data && html`<span class="muted live-note" data-testid="live-note">as of ${clock(data.loadedAt)}</span>`}
    </div>
    <p class="muted">
      Start messages from the <code>STARTS</code> queue (<code>shepherd-starts</code>) that could never start. None is retried: fix what the error
      says and send the message again.
    </p>
    ${error && html`<p class="error" role="alert">${error.message}</p>`}
    ${!data && loading && html`<p class="muted">Loading dead letters…</p>`}
    ${data && data.deadLetters.length === 0 && html`<${NoDeadLetters} />`}
    ${data && data.deadLetters.length > 0 && html`<${DeadLetterTable} deadLetters=${data.deadLetters} now=${data.loadedAt} />`}
    <${Pager} trail=${trail} nextCursor=${data?.nextCursor} linkTo=${(next) => href("dead-letters", { after: trailParam(next) })} label="Dead letter pages" />
  `;
}

function NoDeadLetters() {
  return html`<p class="empty" role="status">
    No dead letters. A start message another Worker sends to the <code>STARTS</code> queue is started as <code>POST /v1/workflows</code> would
    start it; one that never can (a bad body, an unknown tenant, a refused definition, an id another start took) is listed here with its error.
  </p>`;
}
