/**
 * A schedule's state machine: pure, time and the previous workflow's openness come in as arguments. The object
 * (src/cron/cron-schedule.ts) loads, applies one of these, stores, then performs the starts and cancels.
 */
import type { ScheduleSpecInput } from "./spec";
import { latestFiresUpTo, nextFireAfter } from "./cron";
import type { FireOutcome, ScheduleState } from "./state";

/** Fires shown in `recent`. */
export const RECENT_FIRES = 20;
/** After downtime, at most this many missed fires run (the newest); older ones are recorded as missed. */
export const MAX_CATCHUP_FIRES = 10;
/**
 * A fire this late is on time, not a catch-up: the alarm may run a little late, and a fire must not be lost to
 * that even with `catchupWindowMs` 0.
 */
export const ON_TIME_SLACK_MS = 60_000;
/**
 * Due fires looked at in one tick: the newest, since at most MAX_CATCHUP_FIRES run and `recent` shows RECENT_FIRES;
 * after a longer outage the older ones are not even listed.
 */
const MAX_DUE_FIRES = MAX_CATCHUP_FIRES + RECENT_FIRES;

export function workflowIdOf(state: Pick<ScheduleState, "id">, fireAt: number): string {
  return `${state.id}:${fireAt}`;
}

export function createSchedule(tenant: string, spec: ScheduleSpecInput, now: number): ScheduleState {
  const timezone = spec.timezone ?? "UTC";
  const paused = spec.paused ?? false;
  const nextFireAt = paused ? undefined : nextFireAfter(spec.cron, timezone, now);
  return {
    tenant,
    id: spec.id,
    cron: spec.cron,
    timezone,
    workflow: spec.workflow,
    overlap: spec.overlap ?? "skip",
    catchupWindowMs: spec.catchupWindowMs ?? 0,
    paused,
    createdAt: now,
    updatedAt: now,
    ...(nextFireAt === undefined ? {} : { nextFireAt }),
    pendingStarts: [],
    recent: [],
  };
}

/** The alarm: every fire due by `now`, each decided by the overlap policy; then the next fire from now. */
export function fireDue(state: ScheduleState, now: number, previousOpen: boolean): ScheduleState {
  if (state.paused || state.nextFireAt === undefined || state.nextFireAt > now) return state;
  const next = structuredClone(state);
  const due = dueFires(state, state.nextFireAt, now);
  const inWindow = due.filter((at) => now - at <= state.catchupWindowMs + ON_TIME_SLACK_MS).slice(-MAX_CATCHUP_FIRES);
  // A start still pending (a buffered fire released at this alarm, or one a crash left unmade) is open as well.
  let open = previousOpen || state.pendingStarts.length > 0;
  // cancel_previous keeps one workflow running: of several fires caught up at once, only the newest starts.
  const superseded = state.overlap === "cancel_previous" ? inWindow.slice(0, -1) : [];
  for (const at of due) {
    if (superseded.includes(at)) record(next, { at, outcome: "skipped_overlap" });
    else if (inWindow.includes(at)) open = decideFire(next, at, open);
    else record(next, { at, outcome: "missed" });
  }
  setNextFire(next, now);
  return touched(next, now);
}

/** The due fires, oldest first: walked forward from the next fire, or (after a long outage) the newest by `now`. */
function dueFires(state: ScheduleState, nextFireAt: number, now: number): number[] {
  const due: number[] = [];
  for (let at: number | undefined = nextFireAt; at !== undefined && at <= now; at = nextFireAfter(state.cron, state.timezone, at)) {
    // Walking on from the first missed fire would list the oldest ones and leave out the newest, those that run.
    if (due.length === MAX_DUE_FIRES) return latestFiresUpTo(state.cron, state.timezone, now, MAX_DUE_FIRES);
    due.push(at);
  }
  return due;
}

/** Fire now, outside the cron (the operator's trigger), under the same overlap policy. */
export function triggerFire(state: ScheduleState, now: number, previousOpen: boolean): ScheduleState {
  const next = structuredClone(state);
  decideFire(next, now, previousOpen || next.pendingStarts.length > 0);
  return touched(next, now);
}

/** What one fire does, given whether the previous fire's workflow is open; returns whether one is open after. */
function decideFire(state: ScheduleState, at: number, open: boolean): boolean {
  if (!open || state.overlap === "allow") {
    state.pendingStarts.push(at);
    return true;
  }
  switch (state.overlap) {
    case "skip":
      record(state, { at, outcome: "skipped_overlap" });
      return true;
    case "buffer_one":
      if (state.buffered === undefined) {
        state.buffered = at;
        record(state, { at, outcome: "buffered" });
      } else {
        record(state, { at, outcome: "skipped_overlap" });
      }
      return true;
    case "cancel_previous":
      if (state.open !== undefined) state.pendingCancel = state.open;
      state.pendingStarts.push(at);
      return true;
  }
}

/** The open workflow ended (it told us, or the object found it so): a buffered fire starts now. */
export function workflowEnded(state: ScheduleState, workflowId: string, now: number): ScheduleState {
  if (state.open !== workflowId) return state;
  const next = structuredClone(state);
  delete next.open;
  if (next.buffered !== undefined) {
    next.pendingStarts.push(next.buffered);
    delete next.buffered;
  }
  return touched(next, now);
}

/** A pending start was made (or refused for good): recorded, and its workflow is the open one. */
export function startFinished(state: ScheduleState, at: number, outcome: { ok: true } | { ok: false; error: string }, now: number): ScheduleState {
  const next = structuredClone(state);
  next.pendingStarts = next.pendingStarts.filter((pending) => pending !== at);
  if (next.pendingStarts.length === 0) delete next.deferredUntil;
  const workflowId = workflowIdOf(state, at);
  const delays = delayedRecord(next, at)?.delays;
  const counted = delays === undefined ? {} : { delays };
  if (outcome.ok) {
    next.open = workflowId;
    record(next, { at, workflowId, outcome: "started", ...counted });
  } else {
    record(next, { at, workflowId, outcome: "failed", error: outcome.error.slice(0, 500), ...counted });
  }
  return touched(next, now);
}

/**
 * Back-pressure refused a pending start: it stays pending and is tried again at `retryAt` (the object starts it
 * regardless once its catch-up window has run out: a fire no client can retry is deferred, never dropped).
 * Recorded as `delayed`, once per fire, counting the delays.
 */
export function startDeferred(state: ScheduleState, at: number, deferral: { reason: string; retryAt: number }, now: number): ScheduleState {
  const next = structuredClone(state);
  next.deferredUntil = Math.max(next.deferredUntil ?? 0, deferral.retryAt);
  const delays = (delayedRecord(next, at)?.delays ?? 0) + 1;
  record(next, { at, workflowId: workflowIdOf(state, at), outcome: "delayed", error: deferral.reason.slice(0, 500), delays });
  return touched(next, now);
}

/** The latest time a fire's start may be deferred to: the end of its catch-up window. */
export function deferLimitOf(state: Pick<ScheduleState, "catchupWindowMs">, at: number): number {
  return at + state.catchupWindowMs + ON_TIME_SLACK_MS;
}

function delayedRecord(state: ScheduleState, at: number) {
  return state.recent.find((fire) => fire.at === at && fire.outcome === "delayed");
}

export function cancelSent(state: ScheduleState, now: number): ScheduleState {
  const next = structuredClone(state);
  delete next.pendingCancel;
  return touched(next, now);
}

export function pauseSchedule(state: ScheduleState, now: number): ScheduleState {
  if (state.paused) return state;
  const next = structuredClone(state);
  next.paused = true;
  delete next.nextFireAt;
  return touched(next, now);
}

/** The next fire is computed from now: fires that fell while paused are not caught up. */
export function resumeSchedule(state: ScheduleState, now: number): ScheduleState {
  if (!state.paused) return state;
  const next = structuredClone(state);
  next.paused = false;
  setNextFire(next, now);
  return touched(next, now);
}

function setNextFire(state: ScheduleState, now: number): void {
  const at = nextFireAfter(state.cron, state.timezone, now);
  if (at === undefined) delete state.nextFireAt;
  else state.nextFireAt = at;
}

/** Appends a fire's record, replacing the `delayed` one of the same fire: one record per fire, its latest word. */
function record(state: ScheduleState, fire: { at: number; outcome: FireOutcome; workflowId?: string; error?: string; delays?: number }): void {
  const others = state.recent.filter((earlier) => !(earlier.at === fire.at && earlier.outcome === "delayed"));
  state.recent = [...others, fire].slice(-RECENT_FIRES);
}

function touched(state: ScheduleState, now: number): ScheduleState {
  state.updatedAt = now;
  return state;
}
