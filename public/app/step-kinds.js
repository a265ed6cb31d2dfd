// Each step kind in the dashboard's words, in one table: its label in the graph, and for a kind that arms a timer
// (a sleep, a wait for an event) its span on the timeline, its line in the diagnosis and its deadline's name.
// The dashboard cannot import the server's modules; the server's list of kinds is src/domain/language/steps/index.ts, and a
// kind missing here is drawn as a plain step.
import { html } from "./html.js";

export const STEP_KINDS = {
  action: { label: undefined },
  map: { label: "map" },
  workflow: { label: "workflow" },
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

/** What a blocked step of a timed kind waits for, by the diagnosis's reason. */
export const BLOCKED_WORDS = Object.fromEntries(TIMERS.map((timer) => timer.blocked));

/** The kinds' deadlines, by the name the supervisor gives them. */
export const DEADLINE_WORDS = Object.fromEntries(TIMERS.map((timer) => timer.deadline));

function quoted(text) {
  return /"([^"]+)"/.exec(text)?.[1] ?? "?";
}
