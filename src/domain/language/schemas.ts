import { z } from "zod";
import { ActionSchema, HttpActionSchema } from "./actions";
import { REASON_MAX_LENGTH } from "../contract";
import { LIMITS } from "./limits";
import { IdSchema, MAX_TIMER_MS, PayloadSchema, PrioritySchema } from "./primitives";
import { STEP_KIND_FIELDS } from "./steps";

export { ID_PATTERN, IdSchema, MAX_TIMER_MS, PayloadSchema } from "./primitives";
export { ActionSchema, HttpActionSchema, type Action, type HttpAction } from "./actions";
export { SleepSchema, WaitForEventSchema, WAIT_TIMEOUT_OUTCOMES, type Sleep, type WaitForEvent } from "./steps";

/** HTTP statuses a step moves across the transient/permanent line of its `http` action. */
const StatusListSchema = z.array(z.int().min(100).max(599)).max(100).describe("HTTP statuses (100-599)");

/**
 * Retry policy of a step (and of its compensation).
 * Defaults: maxAttempts 3, initialIntervalMs 1000, backoffCoefficient 2, maxIntervalMs 60000, jitter 0.2, no
 * status lists (408, 425, 429, 5xx and unexpected 1xx/3xx are retried; any other 4xx is not).
 */
export const RetryPolicySchema = z
  .strictObject({
    /** Attempts in all, the first included. Default 3. */
    maxAttempts: z.int().min(1).max(100).optional(),
    /** Delay before the first retry. Default 1000 ms. */
    initialIntervalMs: z.int().min(0).max(86_400_000).optional(),
    /** Each further retry waits this much longer than the one before. Default 2. */
    backoffCoefficient: z.number().min(1).max(100).optional(),
    /** Upper bound of any one delay, `Retry-After` included. Default 60000 ms. */
    maxIntervalMs: z.int().min(0).max(86_400_000).optional(),
    /** Fraction of the delay added or removed at random, so retries of many workflows spread out. Default 0.2. */
    jitter: z.number().min(0).max(1).optional(),
    /** Statuses retried though the default calls them permanent (a 404 until a record has replicated). Default none. */
    retryableStatuses: StatusListSchema.optional(),
    /** Statuses that fail the step for good though the default would retry them (a 409 "done already"). Default none. */
    nonRetryableStatuses: StatusListSchema.optional(),
  })
  .superRefine(({ retryableStatuses = [], nonRetryableStatuses = [] }, ctx) => {
    for (const [index, status] of nonRetryableStatuses.entries()) {
      if (!retryableStatuses.includes(status)) continue;
      ctx.addIssue({ code: "custom", path: ["nonRetryableStatuses", index], message: `cannot be in retryableStatuses too: ${status} is retried or not, never both` });
    }
  });

/**
 * Deadlines of one attempt.
 * Defaults: scheduleToStartMs none, startToCloseMs 300000, heartbeatMs 30000.
 */
export const TimeoutsSchema = z.strictObject({
  /**
   * Longest an attempt may sit in the queue before an agent claims it; then it times out and the retry policy
   * applies. No default: as in Temporal, a retry would wait at the back of the same queue, so a timeout here
   * cannot make a slow queue faster and only burns attempts. Set it only when a late start is worse than none.
   */
  scheduleToStartMs: z.int().min(1).max(604_800_000).optional(),
  /** Longest one attempt may take from claim to report. Default 300000 ms. */
  startToCloseMs: z.int().min(1).max(604_800_000).optional(),
  /** Longest silence between heartbeats while an attempt runs or waits. Default 30000 ms. */
  heartbeatMs: z.int().min(1).max(604_800_000).optional(),
  /**
   * Longest an attempt's reported `progress` may stay the same while heartbeats go on: then it has stalled (a job
   * stuck "at 47 %" that still heartbeats) and times out like any other deadline. No default. The clock starts at
   * the attempt's first heartbeat with progress; heartbeats without it (the agent's own while it waits for an
   * answer) neither start nor reset it.
   */
  progressMs: z.int().min(1).max(604_800_000).optional(),
});

/**
 * The circuit breaker of the step's target host (one per host and tenant, shared by all its workflows).
 * Defaults: failures 5, openMs 30000. When several steps call one host, the settings of the latest attempt
 * reported to its breaker apply.
 */
export const BreakerSettingsSchema = z.strictObject({
  /** Transient failures in a row (5xx, 408, 429, network error, deadline) that open the breaker. Default 5. */
  failures: z.int().min(1).max(100).optional(),
  /** How long it stays open the first time; each re-open after a failed probe doubles it, up to 300000. Default 30000 ms. */
  openMs: z.int().min(1_000).max(300_000).optional(),
});

export const StepSchema = z.strictObject({
  id: IdSchema,
  dependsOn: z.array(IdSchema).max(200).optional(),
  /** A template read when the step is ready: a falsy value skips the step. */
  when: z.string().min(1).max(2048).optional(),
  /** Exactly one kind's field (action, sleep, waitForEvent); `checkDefinition` refuses a step with none or several. */
  ...STEP_KIND_FIELDS,
  retry: RetryPolicySchema.optional(),
  timeouts: TimeoutsSchema.optional(),
  compensate: ActionSchema.optional(),
  /**
   * Asks the remote whether an attempt's effect landed, after an attempt with no clear answer (it timed out,
   * stalled, or the connection broke after the request may have been sent) and before the action is sent again:
   * 2xx → the step succeeds with that body, no second request. Sent with the step's Idempotency-Key; usually a GET.
   * Always an http request: a worker's own retry dedupes by the key it is given.
   */
  verify: HttpActionSchema.optional(),
  breaker: BreakerSettingsSchema.optional(),
  /** A worker task's priority in its pool, 1 first; absent: the workflow's (default 3). */
  priority: PrioritySchema.optional(),
});

/**
 * The step a `map` runs for each item: a step without `id`, `dependsOn` or `when` (the map's own decide when it
 * runs), of any kind but `map`. Its templates may read `{{ item }}` and `{{ index }}` besides what the map reads.
 */
export const ItemStepSchema = StepSchema.omit({ id: true, dependsOn: true, when: true });

export const ON_FAILURE = ["compensate", "escalate", "fail"] as const;

/** What runs when no operator acted on an escalated workflow in time: one of the operator's own actions. */
export const ESCALATION_DEFAULTS = ["compensate", "fail", "skip", "retry"] as const;

/**
 * `"escalate"` waits on an operator for ever; `{"escalate": {afterMs, then}}` waits `afterMs`, then does `then`
 * itself, so a workflow parked for a human cannot be forgotten.
 */
export const OnFailureSchema = z.union([
  z.enum(ON_FAILURE),
  z.strictObject({
    escalate: z.strictObject({
      afterMs: z.int().min(1).max(MAX_TIMER_MS),
      then: z.enum(ESCALATION_DEFAULTS),
    }),
  }),
]);

/**
 * A definition's fields, each checked on its own. What only the whole can say (ids unique, dependencies known
 * and acyclic, templates reading upstream steps) is added by `DefinitionSchema` in definition.ts.
 */
export const DefinitionShapeSchema = z.strictObject({
  name: IdSchema,
  onFailure: OnFailureSchema.optional(),
  timeoutMs: z.int().min(1).max(31_536_000_000).optional(),
  defaults: z
    .strictObject({ retry: RetryPolicySchema.optional(), timeouts: TimeoutsSchema.optional(), breaker: BreakerSettingsSchema.optional() })
    .optional(),
  steps: z.array(StepSchema).min(1).max(LIMITS.stepsPerDefinition),
});

/**
 * Why an operator acted: every operator command (and an event) takes one, and the history keeps it with who
 * acted. Bounded, as it is stored in the history of every workflow a bulk action touches.
 */
export const ReasonSchema = z.string().min(1).max(REASON_MAX_LENGTH).describe("Why: recorded in the workflow's history with the name of the token that acted");
const reason = { reason: ReasonSchema.optional() };

/** The bodies of the operator commands: each its own fields, and the reason every command takes. */
export const ReasonOnlySchema = z.strictObject(reason);
export const SkipStepSchema = z.strictObject({ output: PayloadSchema.optional(), ...reason });
export const RedriveSchema = z.strictObject({ fromStep: IdSchema.optional(), ...reason });
export const TaskHeartbeatSchema = z.strictObject({ progress: PayloadSchema.optional() });
export const TaskCompleteSchema = z.strictObject({ output: PayloadSchema.optional() });
export const TaskFailSchema = z.strictObject({
  error: z.strictObject({ message: z.string().min(1).max(4096), retryable: z.boolean().optional() }),
});

/** An event (signal) sent to a workflow; `id` makes the send idempotent. */
export const SendEventSchema = z.strictObject({
  event: IdSchema,
  payload: PayloadSchema.optional(),
  id: IdSchema.optional(),
  ...reason,
});

export type RetryPolicyInput = z.infer<typeof RetryPolicySchema>;
export type TimeoutsInput = z.infer<typeof TimeoutsSchema>;
export type BreakerSettingsInput = z.infer<typeof BreakerSettingsSchema>;
export type StepInput = z.infer<typeof StepSchema>;
export type ItemStepInput = z.infer<typeof ItemStepSchema>;
export type DefinitionInput = z.infer<typeof DefinitionShapeSchema>;
export type OnFailure = (typeof ON_FAILURE)[number];
export type EscalationDefault = (typeof ESCALATION_DEFAULTS)[number];
