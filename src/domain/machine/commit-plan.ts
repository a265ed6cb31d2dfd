import { indexedDeadlineOf, indexEntryOf, indexNeedsEntry, indexSummaryMoved } from "./index-entry";
import { triageOf } from "./triage";
import { isTerminal, type WorkflowState } from "./state";
import type { HistoryEntryFields } from "./history";
import { nextDeadlineAt } from "./deadlines";
import type { ClaimedTask } from "./claimed-task";
import type { AttemptEffect, ChildEffect, Effect } from "./effects";
import { parentNotice } from "./children";
import { endNotice } from "./end-notice";

/** What the shell commits besides the state: the effects, and the deadline the alarm and the index row carry. */
export interface CommitPlan {
  effects: Effect[];
  nextDeadlineAt: number | undefined;
}

/** The part of a transition's result the commit reads (see `transition`, `startWorkflow`). */
export interface Transitioned {
  state: WorkflowState;
  effects: readonly AttemptEffect[];
  /** Children to start or close (`workflow` steps). */
  childEffects?: readonly ChildEffect[];
  history: readonly HistoryEntryFields[];
  /** Attempts the transition claimed for their agent hosts (see claimEagerly): handed to them as effects. */
  handOffs?: readonly ClaimedTask[];
}

/**
 * Every effect of a transition from `previous` (undefined for a start): its task messages, the index entry when
 * the listing or the sweep's lease needs one (`reindex`: the sweep woke the object, write it regardless), the
 * webhooks' announcement of new history, and the notices of an end (to the schedule, the parent, the `notify` URL). The state
 * remembers what the index was given (`indexedDeadlineAt`, `indexedSummary`), so the lease is renewed once, not by every
 * commit after, and the list's line is written when it changes, in the entry a status change writes when it has one.
 */
export function commitPlan(previous: WorkflowState | undefined, result: Transitioned, now: number, reindex = false): CommitPlan {
  const { state } = result;
  const deadline = nextDeadlineAt(state);
  const handOffs = (result.handOffs ?? []).map((task) => ({ type: "HandOffAttempt" as const, task }));
  const effects: Effect[] = [...result.effects, ...handOffs, ...(result.childEffects ?? [])];
  const triage = triageOf(state);
  if (reindex || indexNeedsEntry(previous, state, deadline, now) || indexSummaryMoved(state, triage)) {
    const entry = indexEntryOf(state, indexedDeadlineOf(state, deadline, now), triage);
    state.indexedDeadlineAt = entry.nextDeadlineAt;
    if (triage === undefined) delete state.indexedSummary;
    else state.indexedSummary = triage.summary;
    effects.push({ type: "WriteIndexEntry", entry });
  }
  if (result.history.length > 0) effects.push({ type: "AnnounceHistory", appended: result.history.length });
  if (previous && !isTerminal(previous.status) && isTerminal(state.status) && state.schedule !== undefined) {
    effects.push({ type: "NotifySchedule", schedule: state.schedule, workflowId: state.id });
  }
  const notice = parentNotice(previous, state);
  if (notice) effects.push(notice);
  const ended = endNotice(previous, state, now);
  if (ended) effects.push(ended);
  return { effects, nextDeadlineAt: deadline };
}

