// One schedule as a table row: when it fires, what it starts, what its latest fires did, and its actions.
import { clock } from "../format.js";
import { html } from "../html.js";
import { href } from "../router.js";
import { relative } from "./relative-time.js";
import { ScheduleActions } from "./schedule-actions.js";

/** Fires listed per schedule; the view keeps up to 20. */
const FIRES_SHOWN = 5;

const OVERLAP_WORDS = {
  skip: "skip while open",
  buffer_one: "buffer one",
  cancel_previous: "cancel previous",
  allow: "allow overlap",
};

const OUTCOME_WORDS = { started: "started", delayed: "delayed", skipped_overlap: "skipped", buffered: "buffered", missed: "missed", failed: "failed" };

export function ScheduleRow({ schedule, now, onChanged }) {
  return html`
    <tr data-schedule=${schedule.id}>
      <td><span class="mono">${schedule.id}</span><div class="muted"><${Starts} workflow=${schedule.workflow} /></div></td>
      <td>
        <code>${schedule.cron}</code> <span class="muted">${schedule.timezone}</span>
        <div class="muted" title="What a fire does while the previous fire's workflow is still open">${OVERLAP_WORDS[schedule.overlap] ?? schedule.overlap}</div>
      </td>
      <td><${NextFire} schedule=${schedule} now=${now} /></td>
      <td><${RecentFires} fires=${schedule.recent} /></td>
      <td><${ScheduleActions} schedule=${schedule} onDone=${onChanged} /></td>
    </tr>
  `;
}

/** The definition each fire runs, linked to the list of its workflows. */
function Starts({ workflow }) {
  const name = workflow.definition?.name ?? workflow.definitionRef?.name;
  const version = workflow.definitionRef ? (workflow.definitionRef.version ? ` v${workflow.definitionRef.version}` : " (latest)") : "";
  return html`starts <a href=${href("workflows", { q: name })}>${name}</a>${version}`;
}

function NextFire({ schedule, now }) {
  if (schedule.paused) return html`<span class="status paused" data-testid="schedule-state">paused</span>`;
  return html`
    <span class="status active" data-testid="schedule-state">active</span>
    <div title=${schedule.nextFireAt ? new Date(schedule.nextFireAt).toISOString() : ""}>
      ${clock(schedule.nextFireAt)} <span class="muted">${relative(schedule.nextFireAt, now)}</span>
    </div>
  `;
}

function RecentFires({ fires }) {
  if (fires.length === 0) return html`<span class="muted">No fires yet</span>`;
  const newestFirst = fires.slice(-FIRES_SHOWN).reverse();
  return html`
    <ul class="fires">
      ${newestFirst.map(
        (fire) => html`
          <li key=${fire.at} title=${fire.error ?? ""}>
            <span class="muted">${clock(fire.at)}</span>
            <span class=${`status ${fire.outcome}`}>${OUTCOME_WORDS[fire.outcome] ?? fire.outcome}</span>
            ${fire.workflowId && html`<a class="mono" href=${href("workflows", fire.workflowId)}>${fire.workflowId}</a>`}
          </li>
        `,
      )}
      ${fires.length > FIRES_SHOWN && html`<li class="muted">${fires.length - FIRES_SHOWN} earlier</li>`}
    </ul>
  `;
}
