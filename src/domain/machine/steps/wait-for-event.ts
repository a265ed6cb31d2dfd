/**
 * A `waitForEvent` step: waiting is a timer the supervisor owns (the timeout) plus the inbox. An event that
 * arrives before its wait starts is kept in the inbox, and the first wait for its name that starts takes it:
 * early arrival is never lost, and a wait that timed out leaves nothing behind that could break a later one.
 */
import type { InboxEvent, StepState } from "../state";
import type { WaitForEvent } from "../../language/steps";
import type { TransitionContext } from "../context";
import { failStepOutright } from "../failure";
import { completeStep, skipStepAs } from "./outcome";
import type { StepMachine } from "./step-machine";

/** What a send delivers to a wait: the inbox entry, or an event no inbox ever held. */
export type DeliveredEvent = Pick<InboxEvent, "event" | "payload" | "id">;

export const waitForEventMachine: StepMachine<"waitForEvent"> = {
  start: (ctx, step, plan) => startWait(ctx, step, plan.waitForEvent),
  timerDue: (ctx, step, plan) => {
    if (step.status === "waiting") timeOutWait(ctx, step, plan.waitForEvent);
  },
};

function startWait(ctx: TransitionContext, step: StepState, wait: WaitForEvent): void {
  step.status = "waiting";
  step.waitingSince = ctx.now;
  step.timerAt = ctx.now + wait.timeoutMs;
  ctx.record({ type: "step_waiting_for_event", stepId: step.id, data: { event: wait.event, timeoutAt: step.timerAt } });
  const buffered = takeFromInbox(ctx, wait.event);
  if (buffered) deliverEvent(ctx, step, buffered);
}

/** The step that gets an event of this name now: of the steps waiting for it, the one waiting longest. */
export function waitingStepFor(ctx: TransitionContext, event: string): StepState | undefined {
  let found: StepState | undefined;
  for (const step of ctx.state.steps) {
    if (step.status !== "waiting" || step.waitingSince === undefined) continue;
    const plan = ctx.plan(step.id);
    if (plan.kind !== "waitForEvent" || plan.waitForEvent.event !== event) continue;
    if (!found || step.waitingSince < (found.waitingSince ?? 0)) found = step;
  }
  return found;
}

export function deliverEvent(ctx: TransitionContext, step: StepState, event: DeliveredEvent): void {
  ctx.record({ type: "event_consumed", stepId: step.id, data: { event: event.event, ...(event.id === undefined ? {} : { id: event.id }) } });
  completeStep(ctx, step, event.payload ?? null);
}

/** Hands events held in the inbox to steps now waiting for them, oldest event first (after a resume). */
export function deliverInbox(ctx: TransitionContext): void {
  for (const event of [...(ctx.state.inbox ?? [])]) {
    const step = waitingStepFor(ctx, event.event);
    if (!step) continue;
    removeFromInbox(ctx, event.seq);
    deliverEvent(ctx, step, event);
  }
}

function timeOutWait(ctx: TransitionContext, step: StepState, wait: WaitForEvent): void {
  const timeoutAt = step.timerAt ?? ctx.now;
  const onTimeout = wait.onTimeout ?? "fail";
  ctx.record({ type: "wait_timed_out", stepId: step.id, data: { event: wait.event, onTimeout, timeoutAt, overdueMs: ctx.now - timeoutAt } });
  if (onTimeout === "skip") skipStepAs(ctx, step, "wait_timed_out");
  else failStepOutright(ctx, step, { message: `no "${wait.event}" event within ${wait.timeoutMs} ms`, retryable: false, timeout: "wait_timeout" });
}

function takeFromInbox(ctx: TransitionContext, event: string): InboxEvent | undefined {
  const found = ctx.state.inbox?.find((entry) => entry.event === event);
  if (found) removeFromInbox(ctx, found.seq);
  return found;
}

function removeFromInbox(ctx: TransitionContext, seq: number): void {
  ctx.state.inbox = (ctx.state.inbox ?? []).filter((entry) => entry.seq !== seq);
  ctx.changed = true;
}
