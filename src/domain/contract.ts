/**
 * The words of the API that the service, its client, its command line and its dashboard all use, declared once.
 * A leaf: it imports nothing, so Node loads it as it is (type stripping) and scripts/generate-contract.ts copies
 * every value below into public/app/generated/contract.js for the dashboard, which has no build step. Values only
 * (and types): each export must survive being written out as a JavaScript literal.
 */

export const WORKFLOW_STATUSES = [
  "running",
  /** Started with `startAt` or `startDelayMs`: it waits for that time, and nothing of it has run. */
  "scheduled",
  "paused",
  "compensating",
  "needs_attention",
  "completed",
  "failed",
  "compensated",
  "cancelled",
  "terminated",
] as const;

export const STEP_STATUSES = [
  "pending",
  "scheduled",
  "running",
  "waiting",
  "sleeping",
  "retrying",
  "succeeded",
  "failed",
  "skipped",
  "compensating",
  "compensated",
  "cancelled",
] as const;

export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];
export type StepStatus = (typeof STEP_STATUSES)[number];

/** Statuses a workflow does not leave on its own (a redrive may reopen failed, cancelled and terminated). */
export const TERMINAL_WORKFLOW_STATUSES: readonly WorkflowStatus[] = ["completed", "failed", "compensated", "cancelled", "terminated"];

/** A map item's statuses, as `GET /v1/workflows/{id}/steps/{stepId}/items` gives and filters them. */
export const MAP_ITEM_STATUSES = ["pending", "running", "succeeded", "failed", "skipped", "cancelled", "compensated"] as const;

/** Statuses a step does not leave on its own: nothing of it runs any more. */
export const ENDED_STEP_STATUSES: readonly StepStatus[] = ["succeeded", "skipped", "failed", "compensated", "cancelled"];

/** Workflow ids, step ids, event names and definition names share one format, so they are safe in keys and URLs. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** The bound on `limit` of every list (workflows, definitions, schedules, targets) and the default where it has one. */
export const LIST_PAGE_MAX = 100;
export const LIST_PAGE_DEFAULT = 50;

/** A body field of an operator command, as the command line offers it (`--from-step <step>`). */
export interface CommandField {
  /** What the value stands for in help, e.g. "<text>". */
  value: string;
  description: string;
  /** The value is JSON (parsed before it is sent), not text. */
  json?: true;
}

/**
 * Whether the object's client sends a command again after the object was reset mid-call: only when a second
 * delivery changes nothing, since one applied before the reset would otherwise answer a confusing 409.
 */
export type RpcRetry = "retried" | "once";

/** An operator command as it is seen from outside the service: its route, its words and when it applies. */
export interface OperatorCommandContract {
  /** The route (POST); `{stepId}` in it makes the command act on one step. */
  path: `/v1/workflows/{id}/${string}`;
  operationId: string;
  /** The OpenAPI summary, also the command line's help. */
  summary: string;
  /** The fields of its JSON body, when it takes one (domain/operator-commands.ts holds the schema). */
  fields?: Record<string, CommandField>;
  /** The body must be sent (else a caller may send none, read as `{}`). */
  bodyRequired?: true;
  /**
   * The workflow statuses in which it acts, so the dashboard offers it then; elsewhere the API answers 409, or
   * 200 in `unchanged.in` (nothing to do). A status the view cannot tell apart (a cancel during a compensation
   * that a failure began) may still be refused with a 409 that says why.
   */
  workflowStatuses: readonly WorkflowStatus[];
  /** For a step command, the step statuses it acts on. */
  stepStatuses?: readonly StepStatus[];
  /** Where it has nothing to do: the API answers 200 with the workflow as it was, and why (the 200's description). */
  unchanged?: { in: readonly WorkflowStatus[]; description: string };
  retries: RpcRetry;
}

const OPEN: readonly WorkflowStatus[] = ["scheduled", "running", "paused", "compensating", "needs_attention"];

/** The longest `reason` an operator action (or an event) takes. */
export const REASON_MAX_LENGTH = 1024;

/** Every command takes a reason: the history keeps it with the name of the token that acted. */
const REASON = { reason: { value: "<text>", description: "why, recorded in the history with who acted" } } as const satisfies Record<string, CommandField>;

/**
 * What an operator can tell a workflow to do. Events (signals) sent with `POST /v1/workflows/{id}/events` are not
 * here: they come from the workflow's own callers, carry a payload and a dedupe receipt, and answer differently.
 */
export const OPERATOR_COMMANDS = {
  cancel: {
    path: "/v1/workflows/{id}/cancel",
    operationId: "cancelWorkflow",
    summary: "Cancel: fence running attempts, compensate succeeded steps, end cancelled (a scheduled workflow ends at once, nothing run)",
    fields: REASON,
    workflowStatuses: ["scheduled", "running", "paused", "needs_attention"],
    retries: "once",
  },
  compensate: {
    path: "/v1/workflows/{id}/compensate",
    operationId: "compensateWorkflow",
    summary: "Give up on a workflow in needs_attention: compensate, then end compensated",
    fields: REASON,
    workflowStatuses: ["needs_attention"],
    retries: "once",
  },
  retryStep: {
    path: "/v1/workflows/{id}/steps/{stepId}/retry",
    operationId: "retryStep",
    summary: "Retry a failed step with a fresh attempt budget (workflow in needs_attention)",
    fields: REASON,
    workflowStatuses: ["needs_attention"],
    stepStatuses: ["failed"],
    retries: "once",
  },
  skipStep: {
    path: "/v1/workflows/{id}/steps/{stepId}/skip",
    operationId: "skipStep",
    summary: "Treat a failed step as succeeded with the given output (workflow in needs_attention)",
    fields: { output: { value: "<json>", description: "the step's output, as JSON (default null)", json: true }, ...REASON },
    bodyRequired: true,
    workflowStatuses: ["needs_attention"],
    stepStatuses: ["failed"],
    retries: "once",
  },
  pause: {
    path: "/v1/workflows/{id}/pause",
    operationId: "pauseWorkflow",
    summary: "Pause: dispatch nothing and hold timers until resumed; running attempts go on",
    fields: REASON,
    workflowStatuses: ["running"],
    unchanged: { in: ["paused"], description: "It was already paused: nothing changed" },
    // Pausing a paused workflow changes nothing.
    retries: "retried",
  },
  resume: {
    path: "/v1/workflows/{id}/resume",
    operationId: "resumeWorkflow",
    summary: "Resume a paused workflow: what fell due while paused happens now",
    fields: REASON,
    workflowStatuses: ["paused"],
    retries: "once",
  },
  terminate: {
    path: "/v1/workflows/{id}/terminate",
    operationId: "terminateWorkflow",
    summary: "Terminate: end terminated at once, fence running attempts, compensate nothing",
    fields: REASON,
    workflowStatuses: OPEN,
    retries: "once",
  },
  redrive: {
    path: "/v1/workflows/{id}/redrive",
    operationId: "redriveWorkflow",
    summary: "Redrive a failed, cancelled or terminated workflow: steps that did not succeed (or fromStep and everything downstream) run again",
    fields: { fromStep: { value: "<step>", description: "also run this step and everything downstream of it again" }, ...REASON },
    workflowStatuses: ["failed", "cancelled", "terminated"],
    retries: "once",
  },
} as const satisfies Record<string, OperatorCommandContract>;

export type OperatorCommandName = keyof typeof OPERATOR_COMMANDS;

/** How far ahead a start may be scheduled (`startAt`, `startDelayMs`): 365 days. */
export const MAX_START_DELAY_MS = 365 * 24 * 60 * 60 * 1000;

/** The most starts one `POST /v1/workflows/batch` takes. */
export const MAX_BATCH_STARTS = 100;

/** The items one map may run by default, and the most a deployment may allow (MAP_MAX_ITEMS). */
export const MAX_MAP_ITEMS = 10_000;
export const MAP_ITEMS_CEILING = 100_000;

/**
 * `GET /v1/metrics/series`: the service keeps each tenant's figures per minute for `METRICS_SERIES_RETENTION_MS`,
 * and answers at most `METRICS_SERIES_MAX_POINTS` points a `stepMs` apart, `stepMs` being whole minutes up to a day.
 * Without `from` and `to` it answers the last `METRICS_SERIES_DEFAULT_SPAN_MS`.
 */
export const METRICS_SERIES_MINUTE_MS = 60_000;
export const METRICS_SERIES_MAX_STEP_MS = 86_400_000;
export const METRICS_SERIES_MAX_POINTS = 1_440;
export const METRICS_SERIES_DEFAULT_SPAN_MS = 3_600_000;
export const METRICS_SERIES_RETENTION_MS = 14 * 86_400_000;

/**
 * What a bulk job (`POST /v1/bulk`) can do to every workflow its filter matches: an operator command of the table
 * above, or `event` (the same body as `POST /v1/workflows/{id}/events`).
 */
export const BULK_ACTIONS = ["cancel", "terminate", "redrive", "pause", "resume", "event"] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

/** A bulk job is `running` until every matching workflow has been acted on (or refused), then `done`. */
export const BULK_JOB_STATUSES = ["running", "done"] as const;
export type BulkJobStatus = (typeof BULK_JOB_STATUSES)[number];

/** The most workflow ids one bulk filter may name (the dashboard's selection is at most a page of them). */
export const MAX_BULK_IDS = 1_000;
/** The refusals a bulk job's view lists: its first ones (`failed` counts them all). */
export const BULK_ERRORS_SHOWN = 100;
