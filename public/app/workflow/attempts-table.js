// The timeline's exact figures: every attempt, sleep and wait of every step, with its times to the millisecond
// and why it ended.
import { html } from "../html.js";
import { duration } from "../format.js";
import { attemptDetail, timelineOf } from "./timeline-model.js";
import { preciseClock } from "./time.js";
import { statusLabel } from "../statuses.js";
import { timerOfSpan } from "../step-kinds.js";

export function AttemptsTable({ view, events, now, selected }) {
  const rows = timelineOf(view, events, now).rows.flatMap((row) =>
    row.spans.filter((span) => span.type !== "backoff").map((span) => ({ stepId: row.stepId, span })),
  );
  if (rows.length === 0) return html`<p class="muted">No attempts yet.</p>`;
  return html`
    <table class="attempts" data-testid="attempts-table">
      <thead>
        <tr><th>Step</th><th>Attempt</th><th>Scheduled</th><th>Started</th><th>Last heartbeat</th><th>Ended</th><th>Took</th><th>Why it ended</th></tr>
      </thead>
      <tbody>
        ${rows.map(({ stepId, span }) => html`<${SpanRow} stepId=${stepId} span=${span} selected=${selected === stepId} />`)}
      </tbody>
    </table>
  `;
}

function SpanRow({ stepId, span, selected }) {
  const attempt = span.type === "attempt";
  const { status } = span;
  return html`
    <tr class=${selected ? "selected" : ""} data-step=${stepId}>
      <td><code>${stepId}</code></td>
      <td>${attempt ? html`#${span.n}${span.kind === "compensation" ? html` <span class="muted">compensation</span>` : ""}` : timerOfSpan(span).labelHtml(span)}</td>
      <td class="mono">${preciseClock(span.from)}</td>
      <td class="mono">${preciseClock(attempt ? span.startedAt : span.from)}</td>
      <td class="mono">${attempt ? preciseClock(span.lastHeartbeatAt) : "—"}</td>
      <td class="mono">${preciseClock(span.endedAt)}</td>
      <td class="mono">${took(span)}</td>
      <td><span class=${`status ${status}`}>${statusLabel(status)}</span> ${whyEnded(span)}</td>
    </tr>
  `;
}

function took(span) {
  const begin = span.type === "attempt" ? (span.startedAt ?? span.from) : span.from;
  return span.endedAt === undefined ? "—" : duration(span.endedAt - begin);
}

function whyEnded(span) {
  if (span.type === "attempt") return attemptDetail(span);
  if (span.endedAt !== undefined) return span.outcome === "completed" ? "" : span.outcome;
  return span.until ? `${timerOfSpan(span).ends} at ${preciseClock(span.until)}` : "";
}
