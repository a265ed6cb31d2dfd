// Events (signals) and the inbox (contract v1.1): every event a wait was reached for was consumed by that wait,
// once, with exactly the payload sent, early ones kept in the inbox included; the answers agree with the history.
import { isDeepStrictEqual } from "node:util";
import { field } from "../api-shapes.ts";
import { ofStep } from "../history.ts";
import { answersByPhase, SLEEP_STEP, WAIT_STEP } from "../language.ts";
import type { EventPlan, EventSend } from "../language.ts";
import type { WorkflowView } from "../api-shapes.ts";
import type { Final } from "../finals.ts";
import type { SoakWorkflow } from "../definitions.ts";
import { fail, pass } from "./check.ts";
import type { Check, Report, Violation } from "./check.ts";
import { languageCases } from "./language-cases.ts";
import type { LanguageCase } from "./language-cases.ts";

interface EventTally {
  workflows: number;
  reached: number;
  consumed: number;
  early: number;
  earlyBuffered: number;
  late: number;
  duplicates: number;
  declinedBeforeWait: number;
  notReached: { id: string; status: string }[];
}

/** The wait was reached: the sleep before it ended, or the wait itself left a trace. */
const reachedWait = (f: Final): boolean => ofStep(f.events, "step_succeeded", SLEEP_STEP).length > 0 || f.events.some((e) => e.stepId === WAIT_STEP);

/**
 * Every event a workflow's wait was reached for was consumed by that wait, once, with exactly the payload
 * sent: early ones (sent before the wait started, kept in the inbox) included. The answers agree with the
 * history (an answer `consumed: false` is an `event_received` with `buffered: true`); an event sent late (the
 * view showed the step `waiting`) is consumed at once; a second send with the same `id` (or a resend after
 * no answer) is answered 200 with the first answer and neither is received nor delivered again (one
 * `event_received`, one `event_consumed`); nothing consumed stays in the inbox.
 */
export function checkEvents(finals: readonly Final[], workflows: readonly SoakWorkflow[]): Check {
  const name = "every event consumed once, with its payload";
  const violations: Violation[] = [];
  const tally: EventTally = { workflows: 0, reached: 0, consumed: 0, early: 0, earlyBuffered: 0, late: 0, duplicates: 0, declinedBeforeWait: 0, notReached: [] };
  for (const c of languageCases(finals, workflows)) {
    tally.workflows += 1;
    if (!reachedWait(c.f)) {
      if (c.wf.declinedBeforeWait) tally.declinedBeforeWait += 1;
      else tally.notReached.push({ id: c.f.id, status: c.view.status });
      continue;
    }
    tally.reached += 1;
    const { timing, duplicate } = c.plan.event;
    judgeEvent(c, tally, (kind, extra = {}) => violations.push({ kind, id: c.f.id, timing, duplicate, ...extra }));
  }
  if (tally.workflows === 0) return fail(name, "no workflow used the language (the soak's share produced none)");
  const detail =
    `${tally.consumed}/${tally.reached} waits reached got their event once with its payload (of ${tally.workflows} workflows with a wait` +
    `${tally.declinedBeforeWait ? `, ${tally.declinedBeforeWait} declined before it by design` : ""}${tally.notReached.length ? `, ${tally.notReached.length} ended before it` : ""}); ` +
    `early ${tally.early} (${tally.earlyBuffered} buffered in the inbox), late ${tally.late}, sent twice ${tally.duplicates}; ${violations.length} violation(s)`;
  return (violations.length ? fail : pass)(name, detail, { violations: violations.slice(0, 30), notReached: tally.notReached.slice(0, 10) });
}

/** One workflow whose wait was reached: its event accepted, consumed once with its payload, answered consistently. */
function judgeEvent({ plan, f, view }: LanguageCase, tally: EventTally, v: Report): void {
  const answers = answersByPhase(f.language ?? { sends: [] });
  const first = answers.first;
  if (!first || (first.status !== 202 && first.status !== 200)) {
    v("event never accepted", { answer: first ? { status: first.status, body: first.body } : "never sent", waitStep: view.steps.find((s) => s.id === WAIT_STEP)?.status });
    return;
  }
  if (judgeConsumption(plan.event, f, view, v)) tally.consumed += 1;
  const buffered = field(first.body, "consumed") === false;
  judgeAnswer(first, plan.event.id, f, v);
  if (plan.event.timing === "early") {
    tally.early += 1;
    if (buffered) tally.earlyBuffered += 1;
  } else {
    tally.late += 1;
    if (buffered) v("late event (the step was waiting) answered consumed: false", { answer: first.body, waitingSeenAt: f.language?.waitingSeenAt });
  }
  if (plan.event.duplicate) {
    tally.duplicates += 1;
    const dup = answers.duplicate;
    if (!dup || dup.status !== 200 || !isDeepStrictEqual(dup.body, first.body)) {
      v("duplicate id not answered 200 with the first answer", { first: { status: first.status, body: first.body }, duplicate: dup ? { status: dup.status, body: dup.body } : "never sent" });
    }
  }
  if ((view.pendingEvents ?? []).some((e) => e.id === plan.event.id)) v("consumed event still in the inbox", { pendingEvents: view.pendingEvents });
  if (!Array.isArray(view.pendingEvents)) v("view without pendingEvents");
}

/** The history: the wait consumed exactly this event once and succeeded with its payload. True when consumed once. */
function judgeConsumption(event: EventPlan, f: Final, view: WorkflowView, v: Report): boolean {
  const consumed = ofStep(f.events, "event_consumed", WAIT_STEP);
  const received = f.events.filter((e) => e.type === "event_received" && e.data?.id === event.id);
  const step = view.steps.find((s) => s.id === WAIT_STEP);
  const once = consumed.length === 1 && consumed[0]?.data?.id === event.id && consumed[0]?.data?.event === event.name;
  if (consumed.length !== 1) v("event_consumed by the wait ≠ 1", { count: consumed.length });
  else if (!once) v("the wait consumed another event", { consumed: consumed[0]?.data });
  if (received.length !== 1) v(received.length ? "event_received more than once for one id" : "no event_received for the id sent", { count: received.length });
  if (ofStep(f.events, "step_succeeded", WAIT_STEP).length !== 1) v("wait step did not succeed once", { stepStatus: step?.status, error: step?.error });
  if (ofStep(f.events, "wait_timed_out", WAIT_STEP).length) v("wait timed out although its event was sent");
  const skips = ofStep(f.events, "step_skipped", WAIT_STEP);
  if (skips.length) v("wait skipped although its `when` was true", { data: skips[0]?.data });
  if (!isDeepStrictEqual(step?.output, event.payload)) v("wait step's output is not the payload sent", { output: step?.output ?? null });
  return once;
}

/** The answer and the history tell the same story: `consumed` is event_received's `buffered`, negated. */
function judgeAnswer(first: EventSend, id: string, f: Final, v: Report): void {
  const consumed = field(first.body, "consumed");
  const received = f.events.find((e) => e.type === "event_received" && e.data?.id === id);
  if (typeof consumed !== "boolean") v("event answer without `consumed`", { answer: first.body });
  else if (received && received.data?.buffered !== (consumed === false)) v("answer and event_received disagree on buffering", { answer: first.body, received: received.data });
}
