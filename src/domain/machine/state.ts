import { z } from "zod";
import { findStepPlan, WorkflowPlanSchema, type StepPlan, type WorkflowPlan } from "../language/plan";
import { KindStateSchema, STEP_KIND_NAMES } from "../language/steps";
import { NotifySchema } from "../language/notify";
import { WorkflowMetricsSchema } from "./metrics";
import { RETRY_RULES } from "./remote-outcome";
import { STEP_STATUSES, TERMINAL_WORKFLOW_STATUSES, WORKFLOW_STATUSES, type StepStatus, type WorkflowStatus } from "../contract";

export { STEP_STATUSES, TERMINAL_WORKFLOW_STATUSES, WORKFLOW_STATUSES, type StepStatus, type WorkflowStatus };

/** An attempt either performs the step's action or, once the workflow unwinds, its compensation. */
export const ATTEMPT_KINDS = ["action", "compensation"] as const;
export const ATTEMPT_STATUSES = ["scheduled", "running", "waiting", "succeeded", "failed", "timed_out", "cancelled"] as const;

export const StepErrorSchema = z.object({
  message: z.string(),
  retryable: z.boolean().optional(),
  /** The remote's HTTP status, when there was one. */
  status: z.number().optional(),
  /**
   * Which rule decided `retryable` (remote-outcome.ts), on every failure an agent or a worker reported; absent
   * where the supervisor decided (a deadline, which `timeout` names; a dead letter; a template that did not render).
   */
  rule: z.enum(RETRY_RULES).optional(),
  /** Why a deadline passed: schedule_to_start, start_to_close, heartbeat, stalled, wait_timeout or workflow_timeout. */
  timeout: z.string().optional(),
});

export const AttemptSchema = z.object({
  n: z.number(),
  kind: z.enum(ATTEMPT_KINDS),
  status: z.enum(ATTEMPT_STATUSES),
  scheduledAt: z.number(),
  startedAt: z.number().optional(),
  endedAt: z.number().optional(),
  lastHeartbeatAt: z.number().optional(),
  error: StepErrorSchema.optional(),
  /** When its latest task message was committed for sending; absent: `scheduledAt`. */
  sentAt: z.number().optional(),
  /** How often its task message was sent again (lost by the queue, or dead-lettered), the same attempt each time. */
  resends: z.number().optional(),
  /** How often the queue dead-lettered its message: the poison rule counts these. */
  deadLetters: z.number().optional(),
  /** When the supervisor next asks whether its message was lost; absent (state from before it was stored): `sentAt` + QUEUE_CHECK_MS. */
  queueCheckAt: z.number().optional(),
  /** When a heartbeat last brought progress different from the one before; absent until one brings any. */
  progressAt: z.number().optional(),
  /**
   * The attempt after a parking (its breaker released the step, or the backstop did): its agent asks the breaker
   * and reports the outcome whatever its isolate remembers, so a breaker a restart left half-open still closes.
   */
  afterParking: z.literal(true).optional(),
  /** A worker task: the pool it is offered to now, how often it moved to a fallback pool, and since when it waits there. */
  pool: z.string().optional(),
  poolMoves: z.number().optional(),
  offeredAt: z.number().optional(),
});

/** What every step's state has, whatever its kind. */
export const CommonStepStateSchema = z.object({
  id: z.string(),
  status: z.enum(STEP_STATUSES),
  /** Number of the step's latest attempt; numbers run on through compensation so each attempt is unique. */
  attempt: z.number(),
  /** Attempts spent against the retry policy: reset when compensation begins and by an operator's retry. */
  budgetUsed: z.number(),
  output: z.unknown().optional(),
  error: StepErrorSchema.optional(),
  nextRetryAt: z.number().optional(),
  lastHeartbeatAt: z.number().optional(),
  /** The last heartbeat's details, kept across attempts so a retry can resume where the last one stopped. */
  progress: z.unknown().optional(),
  attempts: z.array(AttemptSchema),
  /** A sleeping step wakes then; a step waiting for an event gives up then. */
  timerAt: z.number().optional(),
  /**
   * When a step started sleeping or waiting for its event: of two waits for one name, the earlier gets the event;
   * the diagnosis says since when a step waits.
   */
  waitingSince: z.number().optional(),
  /**
   * Set when a redrive re-runs a step whose effect was undone (compensated) or that had succeeded: its
   * Idempotency-Key gets `:redrive-<n>` so the remote does the work again instead of replaying the old answer.
   */
  keyRound: z.number().optional(),
  /**
   * Set while the step waits for the breaker of `host` (open since before `since`) to close: its attempt was set
   * aside without using one. The breaker releases it; `nextRetryAt` is the backstop should that release be lost.
   */
  parked: z.object({ host: z.string(), since: z.number(), openUntil: z.number() }).optional(),
});

/** A step's state: what every step has, and its kind with any fields of its own (see steps/). */
export const StepStateSchema = z.intersection(CommonStepStateSchema, KindStateSchema);

/**
 * A step's row as stored: rows written before the state had `kind` lack it, and only the plan can say which a
 * pending step is. `withStepKinds` gives them the plan's, once the plan is read, and checks the kind's own fields
 * (kept here as they are until then).
 */
export const StoredStepSchema = z.intersection(CommonStepStateSchema, z.looseObject({ kind: z.enum(STEP_KIND_NAMES).optional() }));

/** A step as a workflow's start makes it: pending, no attempt yet (until it leaves this state it has no row). */
export function startingStep(plan: Pick<StepPlan, "id" | "kind">): StepState {
  return { id: plan.id, kind: plan.kind, status: "pending", attempt: 0, budgetUsed: 0, attempts: [] };
}

/** Every step's state with its kind (from the plan for a row stored without one) and its kind's own fields checked. */
export function withStepKinds(plan: WorkflowPlan, steps: z.output<typeof StoredStepSchema>[]): StepState[] {
  return steps.map((step) => {
    const kind = step.kind ?? findStepPlan(plan, step.id)?.kind ?? "action";
    return { ...step, ...KindStateSchema.parse({ ...step, kind }) };
  });
}

/** An event kept in the workflow's inbox until a wait for its name starts. */
export const InboxEventSchema = z.object({
  seq: z.number(),
  event: z.string(),
  payload: z.unknown().optional(),
  id: z.string().optional(),
  receivedAt: z.number(),
});

export const CompensationStateSchema = z.object({
  /** Steps still to compensate, in order; the head is the one being compensated. */
  queue: z.array(z.string()),
  /** Where the workflow ends once the queue is empty. */
  endStatus: z.enum(["compensated", "cancelled"]),
});

/**
 * The definition a workflow runs: its name, its registry version when it was started by reference (absent for an
 * inline definition), and the hash of its content either way. The plan itself is stored with the workflow, so a
 * version published later never changes what runs.
 */
export const PinnedDefinitionSchema = z.object({
  name: z.string(),
  version: z.number().optional(),
  hash: z.string(),
});

/** The step whose start made this workflow a child: its parent's id, the step and its attempt, and its own depth. */
export const ParentRefSchema = z.object({
  id: z.string(),
  stepId: z.string(),
  attempt: z.number(),
  /** 1 for a child of a workflow no step started, one more per level (at most MAX_WORKFLOW_DEPTH). */
  depth: z.number(),
});

/** The workflow's own fields; its steps are stored one row each. */
export const WorkflowFieldsSchema = z.object({
  tenant: z.string(),
  id: z.string(),
  name: z.string(),
  /** Absent for workflows started before the registry existed. */
  definition: PinnedDefinitionSchema.optional(),
  /** The id of the schedule whose fire started it, if one did. */
  schedule: z.string().optional(),
  /** Its worker tasks' priority in their pools (1 first; absent: 3) and their fairness key (see pools/). */
  priority: z.number().optional(),
  fairnessKey: z.string().optional(),
  /** The step that started it as its child workflow, if one did. */
  parent: ParentRefSchema.optional(),
  /** Where its end is POSTed (the start's `notify`); the secret stays in storage, never in a view or the history. */
  notify: NotifySchema.optional(),
  plan: WorkflowPlanSchema,
  input: z.unknown(),
  status: z.enum(WORKFLOW_STATUSES),
  output: z.record(z.string(), z.unknown()).optional(),
  error: StepErrorSchema.optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
  endedAt: z.number().optional(),
  /** The whole-workflow deadline (`timeoutMs` after its start: creation, or the start time of a scheduled one). */
  deadlineAt: z.number().optional(),
  /** A delayed start's time (`startAt`, or `startDelayMs` after creation): `scheduled` until then, kept afterwards. */
  startAt: z.number().optional(),
  /** While back-pressure defers a scheduled start that fell due: when it is tried again (see scheduled-start.ts). */
  startRetryAt: z.number().optional(),
  /** Rises by one with every transition that changes the state. */
  version: z.number(),
  /** Ids of succeeded steps in the order they succeeded: compensation walks it backwards. */
  completionOrder: z.array(z.string()),
  compensation: CompensationStateSchema.optional(),
  /** With an escalation deadline: when its default action runs if no operator acted; absent unless `needs_attention`. */
  attentionDeadline: z.number().optional(),
  /** When an operator paused it; absent unless `paused`. */
  pausedAt: z.number().optional(),
  /** How often it was redriven. */
  redriveCount: z.number().optional(),
  /** The next inbox event's seq. */
  nextEventSeq: z.number().optional(),
  /** The deadline its index entry was last written with: a far move either way writes the entry again. */
  indexedDeadlineAt: z.number().optional(),
  /** The list's line its index entry was last written with (triage.ts): a new line writes the entry again. */
  indexedSummary: z.string().optional(),
  /** Its figures for GET /v1/metrics, counted from its history (see metrics.ts); absent until something counted. */
  metrics: WorkflowMetricsSchema.optional(),
});

export type AttemptKind = (typeof ATTEMPT_KINDS)[number];
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];
export type StepError = z.infer<typeof StepErrorSchema>;
export type Attempt = z.infer<typeof AttemptSchema>;
export type StepState = z.infer<typeof StepStateSchema>;
export type CompensationState = z.infer<typeof CompensationStateSchema>;
export type InboxEvent = z.infer<typeof InboxEventSchema>;
export type PinnedDefinition = z.infer<typeof PinnedDefinitionSchema>;
export type ParentRef = z.infer<typeof ParentRefSchema>;
/** The inbox is stored in rows of its own (absent: empty), like the steps. */
export type WorkflowState = z.infer<typeof WorkflowFieldsSchema> & { steps: StepState[]; inbox?: InboxEvent[] };

export const ACTIVE_ATTEMPT_STATUSES: readonly AttemptStatus[] = ["scheduled", "running", "waiting"];

export function isTerminal(status: WorkflowStatus): boolean {
  return TERMINAL_WORKFLOW_STATUSES.includes(status);
}

export function latestAttempt(step: StepState): Attempt | undefined {
  return step.attempts[step.attempts.length - 1];
}

export function activeAttempt(step: StepState): Attempt | undefined {
  const attempt = latestAttempt(step);
  return attempt && ACTIVE_ATTEMPT_STATUSES.includes(attempt.status) ? attempt : undefined;
}
