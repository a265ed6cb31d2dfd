/** Events (signals) sent to a workflow: handed to the wait that waits longest for the name, or kept in the inbox. */
import { isTerminal } from "./state";
import type { TransitionContext } from "./context";
import { afterStepChange } from "./dispatch";
import { deliverEvent, waitingStepFor } from "./steps";
import { actedBy, type ActedBy } from "../language/operator-commands";

/** Unconsumed events one workflow holds at most; a sender past it is told to slow down (429). */
export const MAX_INBOX_EVENTS = 100;

export interface SentEvent {
  event: string;
  payload?: unknown;
  /** The sender's dedupe key; repeats are answered by the shell before they get here. */
  id?: string;
}

export type EventReply = { ok: true; consumed: boolean; duplicate?: true } | { ok: false; code: "conflict" | "inbox_full"; message: string };

/**
 * A paused workflow completes no wait: the event is kept, and resume hands it over. Who sent it (and why, when
 * they said) goes in the history, not the inbox: the step that takes it later gets only the event.
 */
export function receiveEvent(ctx: TransitionContext, sent: SentEvent, by: ActedBy): EventReply {
  const { state } = ctx;
  if (isTerminal(state.status)) return { ok: false, code: "conflict", message: `workflow has already ended (${state.status})` };
  const idField = sent.id === undefined ? {} : { id: sent.id };
  const sender = actedBy(by);
  const waiting = state.status === "paused" ? undefined : waitingStepFor(ctx, sent.event);
  if (waiting) {
    ctx.record({ type: "event_received", data: { event: sent.event, ...idField, buffered: false, ...sender } });
    deliverEvent(ctx, waiting, sent);
    afterStepChange(ctx);
    return { ok: true, consumed: true };
  }
  const inbox = state.inbox ?? [];
  if (inbox.length >= MAX_INBOX_EVENTS) {
    return { ok: false, code: "inbox_full", message: `the workflow holds ${MAX_INBOX_EVENTS} unconsumed events; send more once waits have taken some` };
  }
  const seq = state.nextEventSeq ?? 1;
  state.nextEventSeq = seq + 1;
  state.inbox = [...inbox, { seq, event: sent.event, ...(sent.payload === undefined ? {} : { payload: sent.payload }), ...idField, receivedAt: ctx.now }];
  ctx.record({ type: "event_received", data: { event: sent.event, ...idField, buffered: true, ...sender } });
  return { ok: true, consumed: false };
}
