// The tenant's cron schedules (GET /v1/schedules): when each fires next, what its latest fires did (with
// links to the workflows they started), and the operator's actions on it.
import { api, query } from "../api.js";
import { clock } from "../format.js";
import { html } from "../html.js";
import { TableScroll } from "../list/table-scroll.js";
import { useLive } from "../live.js";
import { href } from "../router.js";
import { Pager, readTrail, trailParam } from "../list/paging.js";
import { ScheduleRow } from "../list/schedule-row.js";

const PAGE_SIZE = 50;
/** Fires come at most once a minute (cron), so a slower refresh shows them soon enough. */
const REFRESH_MS = 5_000;

const anyActive = (data) => data?.schedules.some((schedule) => !schedule.paused) ?? false;

export function SchedulesPage({ route }) {
  const trail = readTrail(route.search);
  const load = async () => ({ ...(await api(`/v1/schedules${query({ limit: PAGE_SIZE, cursor: trail.at(-1) })}`)), loadedAt: Date.now() });
  const { data, error, loading, reload } = useLive(load, [route.search.toString()], { active: anyActive, everyMs: REFRESH_MS });
  return html`
    <div class="list-head">
      <h1>Schedules</h1>
      ${data && html`<span class="muted live-note">as of ${clock(data.loadedAt)}</span>`}
    </div>
    ${error && html`<p class="error" role="alert">${error.message}</p>`}
    ${!data && loading && html`<p class="muted">Loading schedules…</p>`}
    ${data && data.schedules.length === 0 && html`<${NoSchedules} />`}
    ${data && data.schedules.length > 0 && html`<${ScheduleTable} schedules=${data.schedules} now=${data.loadedAt} onChanged=${reload} />`}
    <${Pager} trail=${trail} nextCursor=${data?.nextCursor} linkTo=${(next) => href("schedules", { after: trailParam(next) })} label="Schedule pages" />
  `;
}

function ScheduleTable({ schedules, now, onChanged }) {
  return html`
    <${TableScroll} label="Schedules">
      <table class="schedule-list" data-testid="schedule-list">
        <thead>
          <tr><th>Schedule</th><th>When</th><th>Next fire</th><th>Latest fires</th><th>Actions</th></tr>
        </thead>
        <tbody>
          ${schedules.map((schedule) => html`<${ScheduleRow} key=${schedule.id} schedule=${schedule} now=${now} onChanged=${onChanged} />`)}
        </tbody>
      </table>
    </${TableScroll}>
  `;
}

function NoSchedules() {
  return html`<p class="empty" role="status">No schedules yet. Create one with <code>POST /v1/schedules</code> (a cron expression and the workflow each fire starts; see the <a href="/docs" target="_blank" rel="noopener">API reference</a>).</p>`;
}
