// The timeline's exact figures: every attempt, sleep and wait of every step, with its times to the millisecond
// and why it ended. An attempt opens to show what it sent and what came back.
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { html } from "../html.js";
import { TableScroll } from "../list/table-scroll.js";
import { duration } from "../format.js";
import { attemptDetail, timelineOf } from "./timeline-model.js";
import { preciseClock } from "./time.js";
import { attemptColour, statusLabel } from "../statuses.js";
import { timerOfSpan } from "../step-kinds.js";
import { AttemptExchange } from "./attempt-exchange.js";

const COLUMNS = 8;

export function AttemptsTable({ view, events, now, selected }) {
  const [open, setOpen] = useState(() => new Set());
  const rows = timelineOf(view, events, now).rows.flatMap((row) =>
    row.spans.filter((span) => span.type !== "backoff").map((span) => ({ stepId: row.stepId, span })),
  );
  if (rows.length === 0) return html`<p class="muted">No attempts yet.</p>`;
  const toggle = (key) => setOpen((keys) => (keys.has(key) ? new Set([...keys].filter((other) => other !== key)) : new Set([...keys, key])));
  return html`
    <${TableScroll} label="Attempts">
      <table class="attempts" data-testid="attempts-table">
        <thead>
          <tr><th>Step</th><th>Attempt</th><th>Scheduled</th><th>Started</th><th>Last heartbeat</th><th>Ended</th><th>Took</th><th>Why it ended</th></tr>
        </thead>
        <tbody>
          ${rows.map(({ stepId, span }) => {
            const key = span.type === "attempt" ? `${stepId}#${span.n}` : `${stepId}@${span.from}`;
            const opened = open.has(key);
            return html`<${Fragment} key=${key}>
              <${SpanRow} stepId=${stepId} span=${span} selected=${selected === stepId} opened=${opened} onToggle=${() => toggle(key)} />
              ${opened &&
              html`<tr class="exchange-row" data-step=${stepId}>
                <td colspan=${COLUMNS}><${AttemptExchange} workflowId=${view.id} stepId=${stepId} n=${span.n} status=${span.status} /></td>
              </tr>`}
            <//>`;
          })}
        </tbody>
      </table>
    </${TableScroll}>
  `;
}

function SpanRow({ stepId, span, selected, opened, onToggle }) {
  const attempt = span.type === "attempt";
  const { status } = span;
  return html`
    <tr class=${selected ? "selected" : ""} data-step=${stepId}>
      <td><code>${stepId}</code></td>
      <td>${attempt ? html`<${AttemptToggle} stepId=${stepId} span=${span} opened=${opened} onToggle=${onToggle} />` : timerOfSpan(span).labelHtml(span)}</td>
      <td class="mono">${preciseClock(span.from)}</td>
      <td class="mono">${preciseClock(attempt ? span.startedAt : span.from)}</td>
      <td class="mono">${attempt ? preciseClock(span.lastHeartbeatAt) : "—"}</td>
      <td class="mono">${preciseClock(span.endedAt)}</td>
      <td class="mono">${took(span)}</td>
      <td><span class=${`status ${status} ${attempt ? attemptColour(status) : ""}`}>${statusLabel(status)}</span> ${whyEnded(span)}</td>
    </tr>
  `;
}

/** The attempt's number, a button that opens (and closes) what it sent and what came back. */
function AttemptToggle({ stepId, span, opened, onToggle }) {
  return html`
    <button type="button" class="exchange-toggle" aria-expanded=${opened ? "true" : "false"} title="What it sent and what came back" data-testid=${`open-attempt-${stepId}-${span.n}`} onClick=${onToggle}>
      ${opened ? "▾" : "▸"} #${span.n}
    </button>
    ${span.kind === "compensation" ? html` <span class="muted">compensation</span>` : ""}
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
