import { diagnose, SUPERVISOR_DECISIONS, type Diagnosis } from "../domain/machine/diagnosis";
import { nextDeadlineAt, unclaimedSince } from "../domain/machine";
import { toWorkflowResult, toWorkflowView, type WorkflowResult, type WorkflowView } from "../domain/machine/view";
import { isTerminal } from "../domain/machine/state";
import { NOT_FOUND } from "./rpc";
import type { HistoryEvent } from "./store";
import type { Transitions } from "./transitions";
import type { ItemPage } from "./item-rows";
import type { MapItemStatus } from "../domain/machine";
import { mapItemStepId } from "../domain/language/plan";
import { attemptDetail, type AttemptLookup } from "../domain/machine/attempt-detail";

/** The workflow as the API shows it; undefined when this object holds none. */
export function describeObject(transitions: Transitions): WorkflowView | undefined {
  const state = transitions.state();
  return state && toWorkflowView(state);
}

/** The workflow's result, and whether it is final (the workflow has ended). */
export type ResultAnswer = { ok: true; ended: boolean; result: WorkflowResult } | typeof NOT_FOUND;

/**
 * `GET …/result?waitMs=`: the result at once when the workflow has ended, else once a commit ends it (woken, see
 * EndWaiters) or at `until`, whichever is first.
 */
export async function awaitResult(transitions: Transitions, wait: { waitId: string; until: number }): Promise<ResultAnswer> {
  const now = resultNow(transitions);
  if (!now.ok || now.ended || Date.now() >= wait.until) return now;
  await transitions.endWaiters.wait(wait.waitId, wait.until);
  return resultNow(transitions);
}

function resultNow(transitions: Transitions): ResultAnswer {
  const state = transitions.state();
  return state ? { ok: true, ended: isTerminal(state.status), result: toWorkflowResult(state) } : NOT_FOUND;
}

/** How many of the supervisor's latest decisions a diagnosis lists. */
const RECENT_DECISIONS = 20;

/** What each open step waits for, the next deadline, the alarm and the liveness invariant, from storage. */
export async function diagnoseObject(transitions: Transitions, storage: DurableObjectStorage): Promise<({ ok: true } & Diagnosis<HistoryEvent>) | typeof NOT_FOUND> {
  const state = transitions.state();
  if (!state) return NOT_FOUND;
  const recentDecisions = transitions.store.latestEvents(SUPERVISOR_DECISIONS, RECENT_DECISIONS);
  return { ok: true as const, ...diagnose(state, { alarmAt: await storage.getAlarm(), recentDecisions }) };
}

/**
 * Dev only (the route is off without DEV_HOOKS): what the supervisor holds and the storage work this instance did
 * since it was loaded. Counted before it loads anything itself, so asking costs nothing.
 */
export async function inspectObject(transitions: Transitions, storage: DurableObjectStorage) {
  const { store } = transitions;
  const work = { ...store.stats, alarmWrites: transitions.alarm.writes };
  const state = transitions.state();
  if (!state) return NOT_FOUND;
  const unsentTasks = store.outbox.ofKind("task").length;
  const indexPending = store.outbox.ofKind("index").length > 0;
  // The object's clock when it read the alarm: lateness is judged by it, not by when the answer arrived.
  const [alarmAt, readAt] = [await storage.getAlarm(), Date.now()];
  return {
    id: state.id,
    status: state.status,
    alarmAt,
    readAt,
    nextDeadlineAt: nextDeadlineAt(state) ?? null,
    indexPending,
    unclaimedSince: unclaimedSince(state) ?? null,
    unsentTasks,
    storage: work,
  };
}

/**
 * A page of a map step's items (`GET …/steps/{stepId}/items`); an item in flight takes its attempt from its step
 * in the state, where it runs. Undefined when the workflow has no such map step.
 */
export function mapItemsPage(transitions: Transitions, stepId: string, query: { status?: MapItemStatus; cursor?: number; limit: number }): ItemPage | typeof NOT_FOUND | undefined {
  const state = transitions.state();
  if (!state) return NOT_FOUND;
  if (!state.plan.itemSteps?.[stepId]) return undefined;
  const page = transitions.store.items.page(stepId, query);
  for (const item of page.items) {
    const running = state.steps.find((step) => step.id === mapItemStepId(stepId, item.index));
    if (running) item.attempt = running.attempt;
  }
  return page;
}

/** One attempt of a step with what it sent and got back (`GET …/steps/{stepId}/attempts/{n}`). */
export function attemptOfStep(transitions: Transitions, stepId: string, n: number): AttemptLookup | typeof NOT_FOUND {
  const state = transitions.state();
  if (!state) return NOT_FOUND;
  return attemptDetail(state, stepId, n, (step, attempt) => transitions.store.exchanges.read(step, attempt));
}
