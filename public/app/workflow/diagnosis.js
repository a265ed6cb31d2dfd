// "Why is it where it is?" in plain words, from GET /v1/workflows/{id}/diagnosis: what each open step waits for,
// since when and until when, the next deadline, the liveness check's problems and the supervisor's last decisions.
import { html } from "../html.js";
import { clock, duration } from "../format.js";
import { eventSummary, eventTypeWords } from "./event-words.js";
import { mapItemOf } from "./history-fold.js";
import { count } from "./map-progress.js";
import { errorWords } from "./timeline-model.js";
import { statusLabel } from "../statuses.js";
import { BLOCKED_WORDS, DEADLINE_WORDS as KIND_DEADLINE_WORDS } from "../step-kinds.js";
import { WAITING_FOR_WORKER, workerWaitWords } from "./worker-pool.js";

const RECENT_DECISIONS = 5;

/** `pools` (GET /v1/pools) is there when a step waits for a worker; `now` is when it was read. */
export function Diagnosis({ view, diagnosis, pools, now }) {
  const steps = new Map(view.steps.map((step) => [step.id, step]));
  const ofSteps = diagnosis.blockedOn.filter((blocked) => !mapItemOf(blocked.stepId));
  const lines = [...ofSteps.map((blocked) => blockedWords(blocked, steps.get(blocked.stepId), diagnosis, { pools, now, startAt: view.startAt })), ...openItemWords(diagnosis.blockedOn)];
  return html`
    <div class="diagnosis" data-testid="diagnosis">
      <ul class="plain-words">
        ${lines.length === 0 && html`<li>${outcomeWords(view)}</li>`}
        ${lines.length === 0 && retryNotes(view).map((note) => html`<li class="retried">${note}</li>`)}
        ${lines.map((line) => html`<li>${line}</li>`)}
      </ul>
      ${diagnosis.nextDeadline && html`<p class="muted">Next deadline ${clock(diagnosis.nextDeadline.at)}: ${deadlineWords(diagnosis.nextDeadline)}.</p>`}
      ${diagnosis.problems.length > 0 &&
      html`<div class="problems" role="alert" data-testid="problems">
        <strong>The supervisor's liveness check failed:</strong>
        <ul>${diagnosis.problems.map((problem) => html`<li>${problem}</li>`)}</ul>
      </div>`}
      ${diagnosis.recentDecisions.length > 0 &&
      html`<details class="decisions">
        <summary>The supervisor's recent decisions (${diagnosis.recentDecisions.length})</summary>
        <ul>
          ${diagnosis.recentDecisions.slice(0, RECENT_DECISIONS).map(
            (event) => html`<li><span class="mono">${clock(event.at)}</span> ${eventTypeWords(event.type)}${event.stepId ? html` <code>${event.stepId}</code>` : ""}: ${eventSummary(event)}</li>`,
          )}
        </ul>
      </details>`}
    </div>
  `;
}

/** One sentence per thing the workflow waits for. */
function blockedWords(blocked, step, diagnosis, { pools, now, startAt }) {
  const id = html`<code>${blocked.stepId}</code>`;
  const since = clock(blocked.since);
  const until = blocked.until === undefined ? "" : clock(blocked.until);
  const budget = diagnosis.attempts[blocked.stepId];
  const ofKind = BLOCKED_WORDS[blocked.reason];
  if (ofKind) return ofKind({ id, step, blocked, since, until });
  switch (blocked.reason) {
    case "backing_off":
      return html`Retrying ${compensationOf(step)}${id} (attempt ${(budget?.used ?? 0) + 1} of ${budget?.max ?? "?"}) at ${until} after ${cause(step?.error)}.`;
    case "waiting_for_agent":
      return html`${id}: attempt ${step?.attempt ?? "?"} is queued for an agent since ${since}.`;
    case WAITING_FOR_WORKER:
      return workerWaitWords({ id, blocked, since }, pools, now);
    case "running":
      return runningWords(id, step, budget, since);
    case "circuit_open":
      return html`${id} is parked: the circuit breaker of ${step?.parked?.host ?? "its host"} is open until ${until}; waiting uses no attempt.`;
    case "scheduled_start":
      return blocked.until === startAt
        ? html`Scheduled: it starts at ${until}; nothing runs before. Cancel or terminate it to end it without running anything.`
        : html`Scheduled for earlier, but its start is deferred until ${until}: the task queue is too far behind with this tenant's workflows of its name.`;
    case "paused":
      return html`Paused by an operator since ${since}. Running attempts go on; nothing new starts until it is resumed.`;
    case "needs_operator":
      return html`Needs attention: ${compensationOf(step)}${id} failed for good (${cause(step?.error)}). Retry it, skip it with an output, or compensate the
      workflow${until && `; if nobody acts, the escalation's default runs at ${until}`}.`;
    default:
      return html`${id}: ${blocked.detail}`;
  }
}

/** What a map's open items wait for, in words (the items table lists each). */
const ITEM_REASONS = { waiting_for_agent: "queued for an agent", [WAITING_FOR_WORKER]: "waiting for a worker", backing_off: "backing off", circuit_open: "parked", waiting_for_event: "waiting for an event" };

/**
 * A map has up to maxConcurrency items open at once, each a blocker of its own: one line per map says how many
 * and why, rather than a line per item.
 */
function openItemWords(blockedOn) {
  const maps = new Map();
  for (const blocked of blockedOn) {
    const item = mapItemOf(blocked.stepId);
    if (!item) continue;
    const reasons = maps.get(item.map) ?? maps.set(item.map, new Map()).get(item.map);
    reasons.set(blocked.reason, (reasons.get(blocked.reason) ?? 0) + 1);
  }
  return [...maps].map(([map, reasons]) => {
    const open = [...reasons.values()].reduce((sum, n) => sum + n, 0);
    const why = [...reasons].map(([reason, n]) => `${count(n)} ${ITEM_REASONS[reason] ?? reason.replaceAll("_", " ")}`).join(", ");
    return html`Map <code>${map}</code>: ${count(open)} item${open === 1 ? "" : "s"} open (${why}); its panel lists them.`;
  });
}

function runningWords(id, step, budget, since) {
  const attempt = step?.attempts.at(-1);
  const ofBudget = budget && attempt?.kind !== "compensation" ? ` of ${budget.max}` : "";
  const heartbeat = step?.lastHeartbeatAt === undefined ? "" : `, last heartbeat ${clock(step.lastHeartbeatAt)}`;
  const progress = step?.progress === undefined ? "" : `, progress ${typeof step.progress === "string" ? step.progress : JSON.stringify(step.progress)}`;
  if (attempt?.status === "waiting") {
    return html`${id}: the remote accepted ${compensationOf(step, "the ")}attempt ${attempt.n} at ${since} (202) and reports through its task token${heartbeat}${progress}.`;
  }
  return html`Running ${compensationOf(step)}${id} (attempt ${attempt?.n ?? "?"}${ofBudget}) since ${since}${heartbeat}${progress}.`;
}

function compensationOf(step, article = "") {
  return step?.attempts.at(-1)?.kind === "compensation" ? `${article}compensation of ` : "";
}

/** What made an attempt fail, as briefly as it can be said: "HTTP 503", "a heartbeat timeout", the message. */
function cause(error) {
  if (!error) return "a failure";
  if (error.status !== undefined) return `HTTP ${error.status}`;
  if (error.timeout !== undefined) return `a ${error.timeout.replaceAll("_", "-")} timeout`;
  return error.message;
}

const DEADLINE_WORDS = {
  queue_check: "the check that its task message was not lost",
  schedule_to_start: "the schedule-to-start timeout",
  start_to_close: "the start-to-close timeout",
  heartbeat: "the heartbeat timeout",
  stalled: "the progress-stall timeout",
  retry: "the next retry",
  ...KIND_DEADLINE_WORDS,
  workflow_timeout: "the whole workflow's timeout",
  scheduled_start: "its start",
  attention_deadline: "the escalation's deadline",
};

function deadlineWords({ reason, stepId }) {
  return html`${DEADLINE_WORDS[reason] ?? reason.replaceAll("_", " ")}${stepId ? html` of <code>${stepId}</code>` : ""}`;
}

/** Steps that needed more than one attempt, and why: "`charge` took 3 attempts (HTTP 503 ×2)". */
function retryNotes(view) {
  return view.steps.flatMap((step) => {
    const actions = step.attempts.filter((attempt) => attempt.kind === "action");
    const failed = actions.filter((attempt) => attempt.status === "failed" || attempt.status === "timed_out");
    if (actions.length < 2 || failed.length === 0) return [];
    const causes = new Map();
    for (const attempt of failed) causes.set(cause(attempt.error), (causes.get(cause(attempt.error)) ?? 0) + 1);
    const why = [...causes].map(([text, count]) => (count > 1 ? `${text} ×${count}` : text)).join(", ");
    return [html`Retried <code>${step.id}</code>: ${actions.length} attempts (${why}).`];
  });
}

/** How an ended workflow ended, or what an open one without a named blocker is doing. */
function outcomeWords(view) {
  const took = view.endedAt === undefined ? "" : `, ${duration(view.endedAt - view.createdAt)} after it started`;
  const at = clock(view.endedAt);
  switch (view.status) {
    case "completed":
      return `Completed at ${at}${took}.`;
    case "failed":
      return `Failed at ${at}${took}: ${errorWords(view.error)}.`;
    case "compensated":
      return `Compensated at ${at}: the steps that had succeeded were undone${view.error ? ` after ${view.error.message}` : ""}.`;
    case "cancelled":
      return `Cancelled at ${at}; the steps that had succeeded were compensated.`;
    case "terminated":
      return `Terminated at ${at}: ${view.error?.message ?? "by an operator"}.`;
    default:
      return `The workflow is ${statusLabel(view.status)}.`;
  }
}
