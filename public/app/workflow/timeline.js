// The timeline: one row per step on a shared time axis, its attempts as bars (queued, then running, coloured by
// how they ended), backoffs as dashes, sleeps and waits as bands; the exact times on hover and in the table below.
import { html } from "../html.js";
import { duration } from "../format.js";
import { attemptOutcome, axisTicks, timelineOf } from "./timeline-model.js";
import { offsetLabel, preciseClock } from "./time.js";
import { ACCEPTED_JOB, STEP_TIMERS, timerOfSpan } from "../step-kinds.js";
import { attemptColour } from "../statuses.js";

/** Bars narrower than this (percent of the axis) carry no label: it would spill over their neighbours. */
const LABELLED_WIDTH = 3;
/** A tick label further right than this (percent) would run into the label of the axis's end. */
const LAST_TICK = 85;

export function Timeline({ view, events, now, selected, onSelect }) {
  const timeline = timelineOf(view, events, now);
  const place = (from, to) => placement(timeline, from, to);
  return html`
    <div class="timeline" data-testid="timeline">
      <div class="tl-row tl-axis">
        <div class="tl-label muted">from ${preciseClock(timeline.start)}</div>
        <div class="tl-track" data-testid="timeline-axis">
          ${axisTicks(timeline.start, timeline.end).filter((tick) => place(tick.at, tick.at).left <= LAST_TICK).map(
            (tick) => html`<span class="tl-tick between" style=${{ left: `${place(tick.at, tick.at).left}%` }}>${offsetLabel(tick.offset)}</span>`,
          )}
          <span class="tl-tick end" title=${`ends ${preciseClock(timeline.end)}`}>${offsetLabel(timeline.end - timeline.start)}</span>
        </div>
      </div>
      ${timeline.rows.map(
        (row) => html`
          <div class=${`tl-row ${selected === row.stepId ? "selected" : ""}`} id=${`timeline-step-${row.stepId}`} data-testid=${`timeline-step-${row.stepId}`}>
            <div class="tl-label">
              <button type="button" class="step-link" onClick=${() => onSelect(row.stepId)}>${row.stepId}</button>
              <span class=${`status ${row.status} ${row.colour}`}>${row.status}</span>
            </div>
            <div class="tl-track">${row.spans.map((span) => html`<${Span} stepId=${row.stepId} span=${span} place=${place} />`)}</div>
          </div>
        `,
      )}
    </div>
    <${TimelineLegend} />
  `;
}

/** Left and width in percent of the axis, never narrower than a hairline so a 5 ms attempt still shows. */
function placement({ start, end }, from, to) {
  const span = end - start;
  const left = Math.min(100, Math.max(0, ((from - start) / span) * 100));
  const right = Math.min(100, Math.max(left, ((to - start) / span) * 100));
  return { left, width: right - left };
}

function Span({ stepId, span, place }) {
  if (span.type === "attempt") return html`<${AttemptBar} stepId=${stepId} attempt=${span} place=${place} />`;
  const { left, width } = place(span.from, span.to);
  const style = { left: `${left}%`, width: `${width}%` };
  if (span.type === "backoff") {
    return html`<span class="tl-backoff" style=${style} title=${`${stepId}: backing off after attempt ${span.attempt}, next attempt at ${preciseClock(span.to)}`}></span>`;
  }
  const timer = timerOfSpan(span);
  const label = timer.label(span);
  const title = [`${stepId}: ${label}`, `since ${preciseClock(span.from)}`, span.until && `${timer.until} ${preciseClock(span.until)}`, span.endedAt && `ended ${preciseClock(span.endedAt)}: ${span.outcome}`];
  return html`<span class=${`tl-timer ${span.type} ${span.open ? "open" : ""}`} style=${style} title=${title.filter(Boolean).join("\n")}>${label}</span>`;
}

function AttemptBar({ stepId, attempt, place }) {
  const queued = place(attempt.from, attempt.startedAt ?? attempt.to);
  const ran = attempt.startedAt === undefined ? undefined : place(attempt.startedAt, attempt.to);
  const title = attemptTitle(stepId, attempt);
  const compensation = attempt.kind === "compensation" ? "compensation" : "";
  // A compensation that did its work reads as what it did: the step is compensated.
  const colour = compensation && attempt.status === "succeeded" ? "compensated" : attemptColour(attempt.status);
  return html`
    <span class=${`tl-queued ${compensation}`} style=${{ left: `${queued.left}%`, width: `${queued.width}%` }} title=${title}></span>
    ${ran &&
    html`<span class=${`tl-attempt status ${colour} ${compensation} ${attempt.open ? "open" : ""}`} style=${{ left: `${ran.left}%`, width: `${ran.width}%` }}
      title=${title} data-attempt=${attempt.n}>${ran.width >= LABELLED_WIDTH ? `${attempt.kind === "compensation" ? "↺ " : ""}#${attempt.n}` : ""}</span>`}
    ${attempt.lastHeartbeatAt > attempt.startedAt &&
    html`<span class="tl-heartbeat" style=${{ left: `${place(attempt.lastHeartbeatAt, attempt.lastHeartbeatAt).left}%` }}
      title=${`${stepId}: last heartbeat ${preciseClock(attempt.lastHeartbeatAt)}`}></span>`}
  `;
}

export function attemptTitle(stepId, attempt) {
  return [
    `${stepId} · attempt ${attempt.n}${attempt.kind === "compensation" ? " (compensation)" : ""}`,
    `scheduled ${preciseClock(attempt.from)}`,
    `started ${preciseClock(attempt.startedAt)}`,
    attempt.lastHeartbeatAt !== undefined && `last heartbeat ${preciseClock(attempt.lastHeartbeatAt)}`,
    `ended ${preciseClock(attempt.endedAt)}${attempt.endedAt && attempt.startedAt ? ` (ran ${duration(attempt.endedAt - attempt.startedAt)})` : ""}`,
    attemptOutcome(attempt),
  ]
    .filter(Boolean)
    .join("\n");
}

function TimelineLegend() {
  return html`
    <p class="tl-legend muted">
      <span><i class="tl-swatch queued"></i>queued</span>
      <span><i class="tl-swatch status succeeded"></i>attempt (colour: how it ended)</span>
      <span><i class="tl-swatch status compensated compensation"></i>compensation</span>
      <span><i class="tl-swatch backoff"></i>backoff</span>
      <span><i class=${`tl-swatch status ${ACCEPTED_JOB.colour}`}></i>${ACCEPTED_JOB.legend}</span>
      ${STEP_TIMERS.map((timer) => html`<span><i class=${`tl-swatch status ${timer.status}`}></i>${timer.legend}</span>`)}
      <span><i class="tl-swatch heartbeat"></i>last heartbeat</span>
    </p>
  `;
}
