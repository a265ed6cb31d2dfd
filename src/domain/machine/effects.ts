/**
 * What a transition leaves to be done outside the object's state, as values (like Temporal's workflow commands):
 * the store writes them to the outbox in the transition's own transaction, and the outbox delivers them. Nothing
 * here does I/O, so a test reads a transition's whole consequence from its result.
 */
import type { IndexEntry } from "./index-entry";
import type { AttemptKind, StepError, WorkflowStatus } from "./state";
import type { ClaimedTask } from "./claimed-task";
import type { WorkflowView } from "./view";

/** Where a worker task goes: its pool, where it stands there, and the pool it leaves (a reassignment). */
export interface PoolOffer {
  pool: string;
  priority: number;
  fairnessKey: string;
  /** The pool it was offered to before: withdrawn from there once the new pool has it. */
  withdrawFrom?: string;
}

/**
 * Send the task message of an attempt to the queue (the agent that takes it claims it), or, for a worker action,
 * offer it to its pool (a worker's poll claims it).
 */
export interface EnqueueAttempt {
  type: "EnqueueAttempt";
  stepId: string;
  attempt: number;
  kind: AttemptKind;
  offer?: PoolOffer;
}

/**
 * Take back a worker task its pool still holds: its attempt ended before any worker claimed it (the workflow was
 * cancelled or terminated, the item's map stopped, or no worker took it by its schedule-to-start deadline).
 */
export interface WithdrawTask {
  type: "WithdrawTask";
  stepId: string;
  attempt: number;
  pool: string;
}

/** What a transition does with its attempts outside the object: send them, or take back one a pool still holds. */
export type AttemptEffect = EnqueueAttempt | WithdrawTask;

/** The attempts a transition sends (or offers), without the withdrawals. */
export function attemptSends(effects: readonly AttemptEffect[]): EnqueueAttempt[] {
  return effects.filter((effect): effect is EnqueueAttempt => effect.type === "EnqueueAttempt");
}

/** Write the workflow's entry in the cross-workflow index (D1): only the newest one matters. */
export interface WriteIndexEntry {
  type: "WriteIndexEntry";
  entry: IndexEntry;
}

/** Announce the history this transition appended to the tenant's webhooks, in order after what came before. */
export interface AnnounceHistory {
  type: "AnnounceHistory";
  appended: number;
}

/** Tell the schedule whose fire started this workflow that it ended, so a buffered fire starts at once. */
export interface NotifySchedule {
  type: "NotifySchedule";
  schedule: string;
  workflowId: string;
}

/**
 * Hand an attempt this transition claimed to its agent host, without the queue hop: a start's first attempts,
 * whose hosts said beforehand they have room (Temporal's eager workflow start).
 */
export interface HandOffAttempt {
  type: "HandOffAttempt";
  task: ClaimedTask;
}

/** What a child's start asks the start path for: the body of a `POST /v1/workflows`, rendered and fixed. */
export interface ChildStart {
  id: string;
  definitionRef?: { name: string; version?: number };
  definition?: Record<string, unknown>;
  input?: unknown;
}

/**
 * Start the child workflow of a `workflow` step through the same start path as `POST /v1/workflows`; idempotent by
 * the child's id, so a row delivered twice starts one child.
 */
export interface StartChildWorkflow {
  type: "StartChildWorkflow";
  stepId: string;
  attempt: number;
  start: ChildStart;
  /** The child's own depth (its parent's plus one). */
  depth: number;
}

/** The parent closed a step whose child was still open: cancel or terminate that child (see onParentClose). */
export interface CloseChildWorkflow {
  type: "CloseChildWorkflow";
  stepId: string;
  childId: string;
  action: "cancel" | "terminate";
}

/** What a transition asks of other workflows: its steps' children started or closed. */
export type ChildEffect = StartChildWorkflow | CloseChildWorkflow;

/** Tell the parent whose step started this workflow that it ended, with its output or its error. */
export interface NotifyParent {
  type: "NotifyParent";
  notice: ChildEndNotice;
}

/** A child's end as its parent hears it: fenced by the step's attempt and the child's id. */
export interface ChildEndNotice {
  parentId: string;
  stepId: string;
  attempt: number;
  childId: string;
  status: WorkflowStatus;
  output?: unknown;
  error?: StepError;
}

/** One end of the workflow, as its notice to the start's `notify` URL carries it (see end-notice.ts). */
export interface EndNotice {
  /** The `webhook-id` header: `<workflowId>:end:<redriveCount>`, the same on every retry of this notice. */
  id: string;
  url: string;
  /** Signs it (Standard Webhooks); kept in the outbox row, never shown. */
  secret?: string;
  status: WorkflowStatus;
  endedAt: number;
  /** The workflow as it ended (the view shows no secret). */
  view: WorkflowView;
}

/** Post the workflow's end to its `notify` URL. */
export interface PostEndNotice {
  type: "PostEndNotice";
  notice: EndNotice;
}

export type Effect = EnqueueAttempt | WithdrawTask | HandOffAttempt | WriteIndexEntry | AnnounceHistory | NotifySchedule | ChildEffect | NotifyParent | PostEndNotice;
export type EffectType = Effect["type"];

/** The effects of one type, typed as such. */
export function effectsOf<T extends EffectType>(effects: readonly Effect[], type: T): Extract<Effect, { type: T }>[] {
  return effects.filter((effect): effect is Extract<Effect, { type: T }> => effect.type === type);
}
