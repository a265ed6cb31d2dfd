import type { HandOff } from "../agents/host-shard";
import type { WorkflowPlan } from "../domain/language/plan";
import type { Notify } from "../domain/language/notify";
import type { StartArgs } from "../domain/machine";
import type { ParentRef, PinnedDefinition, WorkflowState } from "../domain/machine/state";
import { lateStartIssue, type ScheduledStart, type StartTimeIssue } from "../domain/language/start-time";
import { toWorkflowView, type WorkflowView } from "../domain/machine/view";
import type { EventReceipt } from "./store";
import type { StepExchange } from "../domain/exchange/exchange";

/** What the front door asks a new workflow's object to start. */
export interface StartRequest {
  tenant: string;
  id: string;
  plan: WorkflowPlan;
  input: unknown;
  /** Hash of the start request's body: the same id with another body is a conflict, not a replay. */
  requestHash: string;
  /** The definition the plan came from; absent only in requests from before the registry. */
  definition?: PinnedDefinition;
  /** The schedule whose fire started it. */
  schedule?: string;
  /** The step whose child it is (a `workflow` step's start). */
  parent?: ParentRef;
  /** Its worker tasks' priority and fairness key in their pools (the start's own fields). */
  priority?: number;
  fairnessKey?: string;
  /** Where its end is POSTed (the start's `notify`). */
  notify?: Notify;
  /** Hand the first attempts straight to agent hosts with room, not through the queue (START_HAND_OFF). */
  handOff?: boolean;
  /** A delayed start: the workflow is `scheduled` until then. */
  scheduledStart?: ScheduledStart;
}

export type StartResult =
  | { ok: true; created: boolean; workflow: WorkflowView }
  | { ok: false; code: "conflict"; message: string }
  /** A new workflow's `startAt` had passed: nothing was stored. */
  | { ok: false; code: "validation_failed"; message: string; details: StartTimeIssue[] };

/** Every call on an object that holds no workflow gets this (error classes do not survive RPC). */
export const NOT_FOUND = { ok: false, code: "not_found", message: "workflow not found" } as const;

/** What the machine's start takes from a start request (the rest is the hash and the hand-off). */
export function startArgsOf(request: StartRequest, now: number): StartArgs {
  const { tenant, id, plan, input, definition, schedule, parent, priority, fairnessKey, notify, scheduledStart } = request;
  return {
    tenant, id, plan, input, now,
    ...(definition ? { definition } : {}), ...(schedule === undefined ? {} : { schedule }), ...(parent ? { parent } : {}),
    ...(priority === undefined ? {} : { priority }), ...(fairnessKey === undefined ? {} : { fairnessKey }), ...(notify ? { notify } : {}),
    ...(scheduledStart ? { startAt: scheduledStart.at } : {}),
  };
}

/** The refusal of a new workflow whose `startAt` passed before its object got the request (see lateStartIssue). */
export function lateStart(request: StartRequest, now: number): StartResult | undefined {
  const issue = lateStartIssue(request.scheduledStart, now);
  return issue && { ok: false, code: "validation_failed", message: `startAt ${issue.message}`, details: [issue] };
}

export interface CommitOptions {
  requestHash?: string;
  /** Write the index entry even though the status did not change (the sweep woke us). */
  reindex?: boolean;
  /** The first answer to an event sent with an id, stored with the delivery. */
  eventReceipt?: EventReceipt;
  /** The attempt an agent claimed (its outbox row, if still unsent, is settled with the claim). */
  claimed?: { stepId: string; attempt: number };
  /** A start or the supervisor's tick: hand the attempts to agent hosts directly when they take them (see HandOff). */
  handOff?: HandOff;
  /** The alarm commits: its deliveries include those that wait on a receiver outside Shepherd (see DeliveredFor). */
  byAlarm?: boolean;
  /** What the attempt this commit records sent and got back (see domain/exchange), kept on its step's row. */
  exchange?: StepExchange;
}

/**
 * The answer to a start of a workflow that exists: the same request again (or a child's start by the step that
 * started it: "already exists with this parent" is that child), or another under its id.
 */
export function startedBefore(existing: { state: WorkflowState; requestHash: string } | undefined, request: StartRequest): StartResult | undefined {
  if (!existing) return undefined;
  const { parent } = existing.state;
  const sameChild = parent !== undefined && parent.id === request.parent?.id && parent.stepId === request.parent.stepId;
  if (existing.requestHash === request.requestHash || sameChild) return { ok: true, created: false, workflow: toWorkflowView(existing.state) };
  return { ok: false, code: "conflict", message: `workflow "${request.id}" already exists with a different definition or input` };
}
