/**
 * A delayed start (`startAt`, `startDelayMs`), as Temporal's start delay: the workflow is created `scheduled`, its
 * steps pending and nothing dispatched. Its start time is its only deadline, so the object's one alarm is set for
 * it and the supervisor's tick starts it: no timer of its own, no polling, and a lost alarm is found by the sweep
 * like any other.
 */
import type { BackPressure } from "../admission/back-pressure";
import type { TransitionContext } from "./context";
import { dispatchReadySteps } from "./dispatch";
import type { WorkflowState } from "./state";

/**
 * How long after its time a scheduled start may be deferred by back-pressure before it is made regardless: it was
 * admitted when it was asked for, and no client is there to retry it, so it is deferred, never dropped.
 */
export const MAX_START_DEFERRAL_MS = 10 * 60 * 1000;

/** Where a workflow came from, as its start's history entry says it. */
export function originOf(state: Pick<WorkflowState, "definition" | "schedule" | "parent">) {
  const { definition, schedule, parent } = state;
  return { ...(definition ? { definition } : {}), ...(schedule === undefined ? {} : { schedule }), ...(parent ? { parent } : {}) };
}

/** When a scheduled workflow is next to be started (its time, or the retry of a deferred start); else undefined. */
export function scheduledStartAt(state: WorkflowState): number | undefined {
  return state.status === "scheduled" ? (state.startRetryAt ?? state.startAt) : undefined;
}

/** Whether the tick at `now` would start a scheduled workflow: the shell then reads the back-pressure for it. */
export function scheduledStartDue(state: WorkflowState, now: number): boolean {
  const at = scheduledStartAt(state);
  return at !== undefined && now >= at;
}

/**
 * The tick at a scheduled workflow's start time. `admission` is back-pressure's verdict for its tenant and name
 * now: while its queue is too far behind, the start waits as a refused client would (recorded once), until
 * MAX_START_DEFERRAL_MS after its time; then, or when admitted, it starts.
 */
export function startWhenDue(ctx: TransitionContext, admission?: BackPressure): void {
  const { state, now } = ctx;
  if (!scheduledStartDue(state, now)) return;
  const startAt = state.startAt ?? now;
  const lastChance = startAt + MAX_START_DEFERRAL_MS;
  if (admission?.overloaded && now < lastChance) {
    const retryAt = Math.min(lastChance, now + admission.retryAfterSeconds * 1_000);
    if (state.startRetryAt === undefined) ctx.record({ type: "workflow_start_deferred", data: { lagMs: admission.lagMs, retryAt } });
    else ctx.changed = true;
    state.startRetryAt = retryAt;
    return;
  }
  const deferred = state.startRetryAt !== undefined;
  delete state.startRetryAt;
  state.status = "running";
  // The workflow's timeout counts from when it runs, not from when it was asked for.
  if (state.plan.timeoutMs !== undefined) state.deadlineAt = now + state.plan.timeoutMs;
  ctx.record({ type: "workflow_started", data: { name: state.name, ...originOf(state), startAt, ...(deferred ? { deferredMs: now - startAt } : {}) } });
  dispatchReadySteps(ctx);
}

/** Cancel before the start: nothing ran, so nothing is compensated; its steps are cancelled and it ends at once. */
export function cancelBeforeStart(ctx: TransitionContext): void {
  const { state } = ctx;
  for (const step of state.steps) step.status = "cancelled";
  state.status = "cancelled";
  state.endedAt = ctx.now;
  ctx.record({ type: "workflow_cancelled" });
}
