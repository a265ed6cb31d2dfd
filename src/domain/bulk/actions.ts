/**
 * What a bulk job sends each workflow, how it reads the answer, and how it tells afterwards whether an action it
 * may or may not have made (its object was reset while the call was out) did land. Pure: the job's object makes
 * the calls (src/bulk/).
 */
import type { BulkAction } from "../contract";
import { actedBy, type ActedBy, type CommandCall, type CommandReply } from "../language/operator-commands";
import type { EventReply, SentEvent } from "../machine/events";
import type { HistoryEventType } from "../machine/history";
import type { BulkError, BulkJobSpec } from "./job";

/** One workflow's call: an operator command, or an event; either way made `by` the job's creator, with its reason. */
export type BulkCall = ({ kind: "command"; call: CommandCall } | { kind: "event"; event: SentEvent }) & { by: ActedBy };

/**
 * The call each matching workflow gets, as the token that created the job would make it: its name is the actor,
 * the job's reason the reason (an event's own `reason`, when it has one, for an event). An event goes with a dedupe
 * id (the sender's own, else one of the job), so that sending it again after a reset delivers it once.
 */
export function bulkCallOf(spec: BulkJobSpec): BulkCall {
  if (spec.action === "event") {
    const { reason, ...event } = spec.event!;
    return { kind: "event", event: { ...event, id: event.id ?? `bulk:${spec.id}` }, by: actedBy({ actor: spec.actor, reason: reason ?? spec.reason }) };
  }
  return { kind: "command", call: { command: spec.action }, by: actedBy({ actor: spec.actor, reason: spec.reason }) };
}

/** How one workflow's action ended: done (also when there was nothing to do), or refused and why. */
export type BulkOutcome = { done: true } | { done: false; error: Omit<BulkError, "workflowId"> };

/**
 * A workflow that does not accept the action (cancel of one that has ended, resume of one that is not paused, an
 * id the tenant does not have) counts as failed, with the object's own reason: the job's errors say which and why.
 */
export function outcomeOf(reply: CommandReply | EventReply | { ok: false; code: string; message: string }): BulkOutcome {
  return reply.ok ? { done: true } : { done: false, error: { code: reply.code, message: reply.message } };
}

/** The history entry each action leaves when it is applied; an event needs none (its dedupe id answers instead). */
const MARKS: Record<Exclude<BulkAction, "event">, { type: HistoryEventType; action?: string }> = {
  cancel: { type: "operator_action", action: "cancel" },
  terminate: { type: "workflow_terminated" },
  redrive: { type: "workflow_redriven" },
  pause: { type: "workflow_paused" },
  resume: { type: "workflow_resumed" },
};

/** A history event as the workflow's object lists it. */
export interface MarkCandidate {
  at: number;
  type: string;
  data?: Record<string, unknown>;
}

/**
 * Whether the workflow's history shows the action applied `by` the job at or after `since`: its entry, with the
 * job's actor and reason (which the machine records on it). A command is applied in the same transaction as its
 * history entry, so no entry means the call did not land (or has not yet: see the caller). Undefined for an
 * event, which is made safe to send again by its dedupe id instead.
 */
export function actionLanded(action: BulkAction, by: ActedBy, events: readonly MarkCandidate[], since: number): boolean | undefined {
  if (action === "event") return undefined;
  const mark = MARKS[action];
  return events.some(
    (event) =>
      event.at >= since &&
      event.type === mark.type &&
      (mark.action === undefined || event.data?.action === mark.action) &&
      event.data?.actor === by.actor &&
      event.data?.reason === by.reason,
  );
}
