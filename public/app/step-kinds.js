// Each step kind in the dashboard's words, in one table: its label in the graph; for an action, how its 202 job shows
// (an attempt the remote accepted and reports on later: a colour of its own, not the wait for an event's); for a kind
// that arms a timer (a sleep, a wait for an event) its span on the timeline, its line in the diagnosis and its
// deadline's name; a map has a span too (its items' time), without a line or a deadline of its own; a child
// workflow has a line in the diagnosis (it waits on another party, with no deadline).
// The dashboard cannot import the server's modules; the server's list of kinds is src/domain/language/steps/index.ts, and a
// kind missing here is drawn as a plain step.
import { html } from "./html.js";
import { AWAITING_CALLBACK } from "./statuses.js";

export const STEP_KINDS = {
  action: {
    label: undefined,
    accepted: { colour: AWAITING_CALLBACK, label: "202 job", legend: "202 job awaiting its callback" },
  },
  map: {
    label: "map",
    // Not a timer, but its items run under it from map_started to its end: on the timeline, one band for all of them.
    timer: {
      startedBy: "map_started",
      span: (data) => ({ type: "map", total: data?.total }),
      status: "running",
      legend: "a map's items",
      label: (span) => `${span.total ?? "?"} items`,
      labelHtml: (span) => `map of ${span.total ?? "?"} items`,
    },
  },
  sleep: {
    label: "sleep",
    timer: {
      startedBy: "step_sleeping",
      span: (data) => ({ type: "sleep", until: data?.until }),
      /** The step's status while its timer runs, as the span's colour and the legend's swatch. */
      status: "sleeping",
      legend: "sleep",
      label: () => "sleep",
      labelHtml: () => "sleep",
      until: "until",
      ends: "wakes",
      deadline: ["sleep", "the end of the sleep"],
      blocked: ["sleeping", ({ id, since, until }) => html`Sleeping in ${id} since ${since}${until && `, wakes at ${until}`}.`],
    },
  },
  waitForEvent: {
    label: "wait for event",
    timer: {
      startedBy: "step_waiting_for_event",
      span: (data) => ({ type: "wait", event: data?.event, until: data?.timeoutAt }),
      status: "waiting",
      legend: "wait for an event",
      label: (span) => `waiting for ${span.event}`,
      labelHtml: (span) => html`wait for <code>${span.event}</code>`,
      until: "times out at",
      ends: "times out",
      deadline: ["wait_timeout", "the wait's timeout"],
      blocked: [
        "waiting_for_event",
        ({ step, blocked, since, until }) =>
          html`Waiting for event <code>${step?.waitingFor?.event ?? quoted(blocked.detail)}</code> since ${since}${until && `, times out at ${until}`}.`,
      ],
    },
  },
  workflow: {
    label: "workflow",
    waits: {
      blocked: [
        "waiting_for_child",
        ({ id, step, since }) =>
          step?.child
            ? html`${id} waits for its child workflow <a href="#/workflows/${encodeURIComponent(step.child.id)}"><code>${step.child.id}</code></a> (${step.child.status}) since ${since}.`
            : html`${id} waits for its child workflow since ${since}.`,
      ],
    },
  },
};

const TIMERS = Object.values(STEP_KINDS).flatMap((kind) => (kind.timer ? [kind.timer] : []));

/** The kind's label in the graph; none for a plain action. */
export function kindLabel(kind) {
  return STEP_KINDS[kind]?.label;
}

/** The timer a history event starts (`step_sleeping` starts a sleep's), if it starts one. */
export function timerStartedBy(eventType) {
  return TIMERS.find((timer) => timer.startedBy === eventType);
}

/** The timer a timeline span is of. */
export function timerOfSpan(span) {
  return TIMERS.find((timer) => timer.span({}).type === span.type);
}

/** The kinds' timers, for the timeline's legend. */
export const STEP_TIMERS = TIMERS;

/** An action's 202 job: its colour, its words on the graph and its legend. */
export const ACCEPTED_JOB = STEP_KINDS.action.accepted;

const WAITS = Object.values(STEP_KINDS).flatMap((kind) => (kind.waits ? [kind.waits] : []));

/** What a blocked step of a timed or waiting kind waits for, by the diagnosis's reason. */
export const BLOCKED_WORDS = Object.fromEntries([...TIMERS, ...WAITS].flatMap((words) => (words.blocked ? [words.blocked] : [])));

/** The kinds' deadlines, by the name the supervisor gives them. */
export const DEADLINE_WORDS = Object.fromEntries(TIMERS.flatMap((timer) => (timer.deadline ? [timer.deadline] : [])));

function quoted(text) {
  return /"([^"]+)"/.exec(text)?.[1] ?? "?";
}
