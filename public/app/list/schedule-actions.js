// What the API lets an operator do to a schedule (pause or resume, fire now, delete), each confirmed first.
import { api } from "../api.js";
import { ConfirmButton } from "../confirm.js";
import { html } from "../html.js";

const path = (id, action = "") => `/v1/schedules/${encodeURIComponent(id)}${action ? `/${action}` : ""}`;

export function ScheduleActions({ schedule, onDone }) {
  const { id } = schedule;
  const toggle = schedule.paused
    ? { label: "Resume", testId: "resume", message: `Schedule “${id}” fires again, from its next fire after now; the fires missed while paused are not made up.`, action: "resume" }
    : { label: "Pause", testId: "pause", message: `Schedule “${id}” stops firing until it is resumed. Workflows it already started run on.`, action: "pause" };
  return html`
    <div class="actions">
      <${ConfirmButton}
        label=${toggle.label}
        testId=${toggle.testId}
        title=${`${toggle.label} schedule ${id}?`}
        message=${toggle.message}
        run=${() => api(path(id, toggle.action), { method: "POST" })}
        onDone=${onDone}
      />
      <${ConfirmButton}
        label="Trigger now"
        testId="trigger"
        title=${`Fire schedule ${id} now?`}
        message=${`Starts its workflow now, as a fire would, under its overlap policy (“${schedule.overlap}”).`}
        run=${() => api(path(id, "trigger"), { method: "POST" })}
        onDone=${onDone}
      />
      <${ConfirmButton}
        label="Delete"
        testId="delete"
        danger=${true}
        title=${`Delete schedule ${id}?`}
        message="The schedule and its timer go away for good. Workflows it already started run on."
        confirmLabel="Delete"
        run=${() => api(path(id), { method: "DELETE" })}
        onDone=${onDone}
      />
    </div>
  `;
}
