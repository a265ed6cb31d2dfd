import type { WorkflowPlan } from "../language/plan";
import type { Notify } from "../language/notify";
import type { BackPressure, QueueLagSample } from "../admission/back-pressure";
import { startingStep, type ParentRef, type PinnedDefinition, type StepError, type WorkflowState } from "./state";
import type { AttemptReport, CircuitOpened } from "./task-message";
import type { HistoryEntryFields } from "./history";
import type { ActedBy, CommandReply, OperatorEvent } from "../language/operator-commands";
import { TransitionContext } from "./context";
import { attemptSends, type AttemptEffect, type ChildEffect, type EnqueueAttempt } from "./effects";
import { superviseDeadlines } from "./deadlines";
import { claimAttempt, type ClaimedTask } from "./claim";
import { dispatchReadySteps } from "./dispatch";
import { recordAccepted, recordDeadLetter, recordFailure, recordHeartbeat, recordSuccess, recordVerified } from "./reports";
import { applyCommand } from "./commands";
import { receiveEvent, type SentEvent } from "./events";
import { noteCircuitOpened, parkAttempt, releaseParkedStep } from "./parking";
import { settleAttentionDeadline } from "./escalation";
import { countHistory } from "./metrics";
import { ItemRowsOverlay, NO_ITEM_ROWS, type MapItemRow, type MapItemRows, type PendingItems } from "./map/item-rows";
import { applyChildEvent, closeChildrenOfFencedSteps, type ChildReply, type ChildWorkflowEvent } from "./children";
import { noteEndNotice, type EndNoticeEvent } from "./end-notice";
import { originOf } from "./scheduled-start";

export { attemptSends } from "./effects";
export type { AttemptEffect, ChildEffect, ChildEndNotice, ChildStart, CloseChildWorkflow, Effect, EndNotice, EnqueueAttempt, WithdrawTask } from "./effects";
export type { ChildReply, ChildWorkflowEvent } from "./children";
export type { EndNoticeEvent } from "./end-notice";
export type { CommitPlan } from "./commit-plan";
export { effectsOf } from "./effects";
export { commitPlan } from "./commit-plan";
export type { HistoryEntry, HistoryEntryFields } from "./history";
export type { ClaimedTask } from "./claim";
export type { ReportRejection } from "./fencing";
export type { EventReply, SentEvent } from "./events";
export { MAX_INBOX_EVENTS } from "./events";
export { nextDeadlineAt } from "./deadlines";
export { queueChecksDue, unclaimedSince } from "./queued-attempts";
export { scheduledStartDue } from "./scheduled-start";
export { NO_ITEM_ROWS, MAP_ITEM_STATUSES, type MapItemRow, type MapItemRows, type MapItemStatus, type PendingItems } from "./map/item-rows";

/** Everything that can happen to a workflow after it started, in the past tense. */
export type WorkflowEvent =
  /** `pool`: the claim of a worker task, by the pool it waits in (a pool it moved away from claims nothing). */
  | { type: "AttemptClaimed"; stepId: string; attempt: number; pool?: string }
  | { type: "HeartbeatReceived"; stepId: string; attempt: number; progress?: { value?: unknown } }
  | { type: "AttemptSucceeded"; stepId: string; attempt: number; output: unknown }
  | { type: "AttemptAccepted"; stepId: string; attempt: number }
  | { type: "AttemptVerified"; stepId: string; attempt: number; output: unknown; status: number }
  | { type: "AttemptFailed"; stepId: string; attempt: number; error: StepError; retryAfterMs?: number; circuitOpened?: CircuitOpened }
  /** The agent found the host's breaker open and made no request. */
  | { type: "AttemptParked"; stepId: string; attempt: number; host: string; openUntil: number }
  /** The host's breaker closed (or lets this step probe it): a step parked on it runs again. */
  | { type: "ParkedStepReleased"; stepId: string; host: string }
  | { type: "TaskDeadLettered"; stepId: string; attempt: number }
  /**
   * The supervisor's tick; `queueLag` is the task queue's lag, read when a queued attempt's check is due, and
   * `startAdmission` back-pressure's verdict on the workflow's tenant and name, read when its scheduled start is due.
   */
  | { type: "DeadlinesReached"; queueLag?: QueueLagSample; startAdmission?: BackPressure }
  | ({ type: "EventReceived"; by: ActedBy } & SentEvent)
  /** An operator's command: the table in domain/operator-commands.ts says which event each one becomes. */
  | OperatorEvent
  /** A `workflow` step's child started, was refused or ended (children.ts). */
  | ChildWorkflowEvent
  /** The end's notice to the `notify` URL was posted or given up (end-notice.ts). */
  | EndNoticeEvent;

/** An agent's report on an attempt, as the event it is. */
export function reportEvent(stepId: string, attempt: number, report: AttemptReport): Extract<WorkflowEvent, { type: "AttemptSucceeded" | "AttemptAccepted" | "AttemptFailed" | "AttemptVerified" | "AttemptParked" }> {
  switch (report.type) {
    case "succeeded":
      return { type: "AttemptSucceeded", stepId, attempt, output: report.output };
    case "accepted":
      return { type: "AttemptAccepted", stepId, attempt };
    case "verified":
      return { type: "AttemptVerified", stepId, attempt, output: report.output, status: report.status };
    case "failed":
      return {
        type: "AttemptFailed",
        stepId,
        attempt,
        error: report.error,
        ...(report.retryAfterMs === undefined ? {} : { retryAfterMs: report.retryAfterMs }),
        ...(report.circuitOpened === undefined ? {} : { circuitOpened: report.circuitOpened }),
      };
    case "parked":
      return { type: "AttemptParked", stepId, attempt, host: report.host, openUntil: report.openUntil };
  }
}

type ReplyOf<E extends WorkflowEvent["type"]> = E extends "AttemptClaimed"
  ? ReturnType<typeof claimAttempt>
  : E extends "HeartbeatReceived"
    ? ReturnType<typeof recordHeartbeat>
    : E extends "AttemptSucceeded" | "AttemptAccepted" | "AttemptFailed" | "AttemptVerified" | "AttemptParked" | "TaskDeadLettered"
      ? ReturnType<typeof recordSuccess>
      : E extends "DeadlinesReached"
        ? { ok: true }
        : E extends "EventReceived"
          ? ReturnType<typeof receiveEvent>
          : E extends OperatorEvent["type"]
            ? CommandReply
            : E extends "ParkedStepReleased"
              ? ReturnType<typeof releaseParkedStep>
              : E extends ChildWorkflowEvent["type"]
                ? ChildReply
                : E extends EndNoticeEvent["type"]
                  ? { ok: true }
                  : never;

export interface TransitionResult<R = unknown> {
  state: WorkflowState;
  /** False when the event changed nothing (a duplicate, a rejected report): nothing needs persisting. */
  changed: boolean;
  /** The attempts to send; `commitPlan` adds the rest of the transition's effects. */
  effects: AttemptEffect[];
  /** Children of `workflow` steps to start or close. */
  childEffects: ChildEffect[];
  history: HistoryEntryFields[];
  reply: R;
  /** Map items' rows this transition wrote, and maps whose items it started (every row pending). */
  itemRows: MapItemRow[];
  pendingItems: PendingItems[];
}

/**
 * The workflow state machine: pure, no I/O. The input state is never mutated; time and randomness come in
 * as arguments so every transition can be replayed in a test.
 */
export function transition<E extends WorkflowEvent>(
  state: WorkflowState,
  event: E,
  now: number,
  random: () => number = Math.random,
  items: MapItemRows = NO_ITEM_ROWS,
): TransitionResult<ReplyOf<E["type"]>> {
  // The plan and the input never change after the start: shared, not copied (a map's items may be most of it).
  const { plan, input, ...changing } = state;
  const ctx = new TransitionContext({ ...structuredClone(changing), plan, input }, now, random, items);
  const reply = apply(ctx, event);
  closeChildrenOfFencedSteps(ctx, state);
  // However it left `paused` (resume, cancel, terminate, the workflow's timeout), it is no longer paused.
  if (ctx.state.status !== "paused" && ctx.state.pausedAt !== undefined) delete ctx.state.pausedAt;
  // Nor, however it left `scheduled` (its start, cancel, terminate), is its start still deferred.
  if (ctx.state.status !== "scheduled" && ctx.state.startRetryAt !== undefined) delete ctx.state.startRetryAt;
  settleAttentionDeadline(ctx);
  if (ctx.changed) {
    ctx.state.version += 1;
    ctx.state.updatedAt = now;
    // The workflow's figures for GET /v1/metrics, counted from what this transition recorded.
    const metrics = countHistory(ctx.state.metrics, ctx.history);
    if (metrics) ctx.state.metrics = metrics;
  }
  return { ...resultOf(ctx), reply: reply as ReplyOf<E["type"]> };
}

function resultOf(ctx: TransitionContext): Omit<TransitionResult<never>, "reply"> {
  const { state, changed, effects, childEffects, history, items } = ctx;
  return { state, changed, effects, childEffects, history, itemRows: items.writes(), pendingItems: items.pending };
}

function apply(ctx: TransitionContext, event: WorkflowEvent): unknown {
  switch (event.type) {
    case "AttemptClaimed":
      return claimAttempt(ctx, event.stepId, event.attempt, event.pool);
    case "HeartbeatReceived":
      return recordHeartbeat(ctx, event.stepId, event.attempt, event.progress);
    case "AttemptSucceeded":
      return recordSuccess(ctx, event.stepId, event.attempt, event.output);
    case "AttemptAccepted":
      return recordAccepted(ctx, event.stepId, event.attempt);
    case "AttemptVerified":
      return recordVerified(ctx, event.stepId, event.attempt, event.output, event.status);
    case "AttemptFailed":
      noteCircuitOpened(ctx, event.stepId, event.attempt, event.circuitOpened);
      return recordFailure(ctx, event.stepId, event.attempt, event.error, event.retryAfterMs);
    case "AttemptParked":
      return parkAttempt(ctx, event.stepId, event.attempt, event.host, event.openUntil);
    case "ParkedStepReleased":
      return releaseParkedStep(ctx, event.stepId, event.host);
    case "TaskDeadLettered":
      return recordDeadLetter(ctx, event.stepId, event.attempt);
    case "DeadlinesReached":
      superviseDeadlines(ctx, event.queueLag, event.startAdmission);
      return { ok: true };
    case "EventReceived":
      return receiveEvent(ctx, { event: event.event, ...(event.payload === undefined ? {} : { payload: event.payload }), ...(event.id === undefined ? {} : { id: event.id }) }, event.by);
    case "ChildWorkflowStarted":
    case "ChildWorkflowRefused":
    case "ChildWorkflowEnded":
      return applyChildEvent(ctx, event);
    case "EndNoticeDelivered":
    case "EndNoticeFailed":
      return noteEndNotice(ctx, event);
    default:
      return applyCommand(ctx, event);
  }
}

export interface StartArgs {
  tenant: string;
  id: string;
  plan: WorkflowPlan;
  input: unknown;
  now: number;
  /** Which definition the plan came from (name, registry version, content hash). */
  definition?: PinnedDefinition;
  /** The schedule whose fire started it. */
  schedule?: string;
  /** The step whose child it is. */
  parent?: ParentRef;
  /** Its worker tasks' priority and fairness key in their pools. */
  priority?: number;
  fairnessKey?: string;
  /** Where its end is POSTed (the start's `notify`). */
  notify?: Notify;
  /** A delayed start's time: later than `now`, the workflow is created `scheduled` and starts then. */
  startAt?: number;
}

/**
 * A new workflow: every step pending, then the steps with no dependencies dispatched together; or, with a start
 * time still ahead, `scheduled` with nothing dispatched until the supervisor starts it then (scheduled-start.ts).
 */
export function startWorkflow(args: StartArgs, random: () => number = Math.random): TransitionResult<{ ok: true }> {
  const { tenant, id, plan, input, now, priority, fairnessKey, notify } = args;
  const origin = originOf(args);
  const placement = { ...(priority === undefined ? {} : { priority }), ...(fairnessKey === undefined ? {} : { fairnessKey }) };
  const startAt = args.startAt !== undefined && args.startAt > now ? args.startAt : undefined;
  const state: WorkflowState = {
    tenant,
    id,
    name: plan.name,
    ...origin,
    ...placement,
    ...(notify ? { notify } : {}),
    plan,
    input: input ?? null,
    status: startAt === undefined ? "running" : "scheduled",
    createdAt: now,
    updatedAt: now,
    ...(plan.timeoutMs === undefined || startAt !== undefined ? {} : { deadlineAt: now + plan.timeoutMs }),
    ...(startAt === undefined ? {} : { startAt }),
    version: 1,
    completionOrder: [],
    steps: plan.steps.map((step) => startingStep(step)),
  };
  const ctx = new TransitionContext(state, now, random);
  if (startAt === undefined) {
    ctx.record({ type: "workflow_started", data: { name: plan.name, ...origin } });
    dispatchReadySteps(ctx);
  } else {
    ctx.record({ type: "workflow_scheduled", data: { name: plan.name, startAt, ...origin } });
  }
  const metrics = countHistory(undefined, ctx.history);
  if (metrics) ctx.state.metrics = metrics;
  return { ...resultOf(ctx), changed: true, reply: { ok: true } };
}

/**
 * Eager dispatch, like Temporal's eager activity execution: the agent that reports one attempt takes up to
 * `limit` of the attempts its report scheduled, claimed in the same transition instead of sent through the
 * queue. A taken attempt is owned by its deadlines exactly as after a queue claim; the rest are still enqueued.
 */
export function claimEagerly<R>(
  result: TransitionResult<R>,
  limit: number,
  now: number,
  takes: (attempt: EnqueueAttempt) => boolean = () => true,
  items: MapItemRows = NO_ITEM_ROWS,
): TransitionResult<R> & { claimed: ClaimedTask[] } {
  let merged: TransitionResult<R> = result;
  const claimed: ClaimedTask[] = [];
  // A worker task is its pool's to hand out: never taken by an agent.
  const sends = attemptSends(result.effects).filter((effect) => !effect.offer && takes(effect));
  for (const effect of sends.slice(0, Math.max(0, limit))) {
    // The claim reads the items' rows as the report left them, its own writes not yet stored.
    const rows = new ItemRowsOverlay(items);
    for (const row of merged.itemRows) rows.write(row);
    const claim = transition(merged.state, { type: "AttemptClaimed", stepId: effect.stepId, attempt: effect.attempt }, now, Math.random, rows);
    merged = {
      state: claim.state,
      changed: merged.changed || claim.changed,
      effects: [...merged.effects.filter((other) => other !== effect), ...claim.effects],
      childEffects: [...merged.childEffects, ...claim.childEffects],
      history: [...merged.history, ...claim.history],
      reply: merged.reply,
      itemRows: [...merged.itemRows, ...claim.itemRows],
      pendingItems: [...merged.pendingItems, ...claim.pendingItems],
    };
    if (claim.reply.ok && "task" in claim.reply) claimed.push(claim.reply.task);
  }
  return { ...merged, claimed };
}
