// What happened to each step over time, as spans on one axis: its attempts (action and compensation, each from
// scheduled through started to ended), the backoffs between them, and its sleeps and waits, which have no
// attempts and come from the history.
import { statusLabel, stepColour } from "../statuses.js";
import { timerOfSpan, timerStartedBy } from "../step-kinds.js";

/** `{ start, end, rows: [{ stepId, status, colour, spans }] }`; `now` closes spans that are still open. */
export function timelineOf(view, events, now) {
  const start = view.createdAt;
  const end = Math.max(start + 1, view.endedAt ?? now);
  const rows = view.steps.map((step) => ({
    stepId: step.id,
    status: step.status,
    colour: stepColour(step),
    spans: [...attemptSpans(step, end), ...backoffSpans(step, events), ...timerSpans(step, events, end, view.endedAt === undefined)].sort((a, b) => a.from - b.from),
  }));
  return { start, end, rows };
}

function attemptSpans(step, end) {
  const latestStarted = step.attempts.findLast((attempt) => attempt.startedAt !== undefined);
  return step.attempts.map((attempt) => ({
    type: "attempt",
    n: attempt.n,
    kind: attempt.kind,
    status: attempt.status,
    from: attempt.scheduledAt,
    startedAt: attempt.startedAt,
    to: attempt.endedAt ?? end,
    open: attempt.endedAt === undefined,
    endedAt: attempt.endedAt,
    error: attempt.error,
    // A worker step's task waits in its pool, not in the agents' queue.
    ...(attempt.status === "scheduled" && step.pool ? { pool: step.pool } : {}),
    // The view keeps the step's last heartbeat only; it belongs to its latest attempt that started.
    lastHeartbeatAt: attempt === latestStarted && step.lastHeartbeatAt >= attempt.startedAt ? step.lastHeartbeatAt : undefined,
  }));
}

function backoffSpans(step, events) {
  return events
    .filter((event) => event.type === "step_retry_scheduled" && event.stepId === step.id)
    .map((event) => ({ type: "backoff", attempt: event.attempt, kind: event.data?.kind, from: event.at, to: event.data?.nextRetryAt ?? event.at }));
}

/** Events that end a sleep or a wait: how it ended, in words and as a status. */
const TIMER_ENDS = {
  step_succeeded: ["completed", "succeeded"],
  event_consumed: ["event received", "succeeded"],
  wait_timed_out: ["timed out", "timed_out"],
  step_skipped: ["skipped", "skipped"],
  step_failed: ["failed", "failed"],
  step_compensated: ["compensated", "compensated"],
};

function timerSpans(step, events, end, running) {
  const spans = [];
  let open;
  for (const event of events) {
    if (event.stepId !== step.id) continue;
    const timer = timerStartedBy(event.type);
    if (timer) {
      open = { ...timer.span(event.data), from: event.at };
      spans.push(open);
    } else if (open && TIMER_ENDS[event.type]) {
      const [words, status] = TIMER_ENDS[event.type];
      Object.assign(open, { endedAt: event.at, to: event.at, status, outcome: event.type === "event_consumed" ? `event "${event.data?.event}" received` : words });
      open = undefined;
    }
  }
  // A sleep or wait the workflow ended around (cancelled, terminated) stops with it.
  for (const span of spans) {
    if (span.endedAt !== undefined) continue;
    Object.assign(span, { to: end, open: running, status: running ? timerOfSpan(span).status : "cancelled" });
  }
  return spans;
}

/** Why an attempt ended, in words: "succeeded", "failed: HTTP 503 — …", "timed out: heartbeat timeout". */
export function attemptOutcome(attempt) {
  const detail = attemptDetail(attempt);
  return `${statusLabel(attempt.status)}${detail ? `: ${detail}` : ""}`;
}

/** What the status alone does not say: the error, the deadline that passed, what a live attempt waits for. */
export function attemptDetail(attempt) {
  const error = attempt.error;
  switch (attempt.status) {
    case "scheduled":
      return attempt.pool ? `waiting for a worker of pool ${attempt.pool}` : "queued for an agent";
    case "waiting":
      return "the remote accepted it (202) and reports through its task token";
    case "timed_out":
      return `${(error?.timeout ?? "deadline").replaceAll("_", "-")} timeout`;
    case "failed":
      return errorWords(error);
    case "cancelled":
      return error?.message ?? "fenced by an operator's action";
    default:
      return "";
  }
}

/**
 * "HTTP 409 — remote answered 409: … (not retried: the step's nonRetryableStatuses)", or the message alone. The
 * rule that decided is named when it is not the default one: a step's status list, or the reporter's own word.
 */
export function errorWords(error) {
  if (!error) return "no error recorded";
  const parts = [];
  if (error.status !== undefined) parts.push(`HTTP ${error.status}`);
  if (error.timeout !== undefined) parts.push(`${error.timeout.replaceAll("_", " ")} timeout`);
  parts.push(error.message);
  const rule = ruleWords(error);
  return `${parts.join(" — ")}${rule ? ` (${rule})` : ""}`;
}

function ruleWords({ rule, retryable }) {
  if (rule === "nonRetryableStatuses") return "not retried: the step's nonRetryableStatuses";
  if (rule === "retryableStatuses") return "retried: the step's retryableStatuses";
  if (rule === "reported") return retryable === false ? "not retried: the report said so" : "retryable, as reported";
  return "";
}

/** Evenly spaced, round tick times for an axis from start to end: a run of 12 ms gets a tick every 2 ms. */
export function axisTicks(start, end, wanted = 8) {
  const span = end - start;
  const step = TICK_STEPS.find((candidate) => span / candidate <= wanted) ?? TICK_STEPS.at(-1);
  const ticks = [];
  for (let offset = 0; offset <= span; offset += step) ticks.push({ at: start + offset, offset });
  return ticks;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const TICK_STEPS = [1, 2, 5, 10, 20, 50, 100, 250, 500, SECOND, 2 * SECOND, 5 * SECOND, 10 * SECOND, 15 * SECOND, 30 * SECOND, MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR, 7 * 24 * HOUR];
