// The workflows the soak starts, in the words of the contract's start request: the shapes of their definitions,
// the retry policy and step defaults the families share, and the entry every family keeps per workflow.
import { MAIN_REMOTE_BREAKER } from "./faults.ts";
import type { LanguagePlan } from "./language.ts";

export interface HttpAction {
  type: "http";
  url: string;
  method?: string;
  body?: Record<string, unknown>;
}

/** A task for the user's own workers (contract v1.2, "worker pools"): offered to `pool`, its input templated. */
export interface WorkerAction {
  type: "worker";
  pool: string;
  input?: Record<string, unknown>;
}

export interface RetryPolicy {
  maxAttempts?: number;
  initialIntervalMs?: number;
  backoffCoefficient?: number;
  maxIntervalMs?: number;
  jitter?: number;
}

export interface StepTimeouts {
  startToCloseMs?: number;
  heartbeatMs?: number;
  progressMs?: number;
  scheduleToStartMs?: number;
}

export interface BreakerSettings {
  failures?: number;
  openMs?: number;
}

export interface StepDefaults {
  retry?: RetryPolicy;
  timeouts?: StepTimeouts;
  breaker?: BreakerSettings;
}

/** A map step's item step: an action or a child workflow, without an id (contract v1.2, "Map"). */
export type ItemStepDefinition = Omit<StepDefinition, "id" | "map" | "when">;

/** What a parent does with its open child when it is cancelled or terminated (contract v1.2, "Child workflows"; default cancel). */
export type OnParentClose = "cancel" | "terminate" | "abandon";

/** A `workflow` step: the child it starts, by inline definition (contract v1.2, "Child workflows"). */
export interface ChildWorkflowStep {
  definition: Definition;
  /** Templated in the parent's step context (a map's item reads `{{ item }}` and `{{ index }}`). */
  input?: Record<string, unknown>;
  onParentClose?: OnParentClose;
}

export interface MapDefinition {
  /** A template that yields an array, or the array. */
  items: string | unknown[];
  maxConcurrency?: number;
  toleratedFailures?: number;
  step: ItemStepDefinition;
}

export interface StepDefinition {
  id: string;
  action?: HttpAction | WorkerAction;
  compensate?: HttpAction;
  verify?: HttpAction;
  timeouts?: StepTimeouts;
  retry?: RetryPolicy;
  sleep?: { durationMs: number } | { until: string };
  when?: string;
  waitForEvent?: { event: string; timeoutMs: number; onTimeout: "fail" };
  map?: MapDefinition;
  workflow?: ChildWorkflowStep;
}

export interface Definition {
  name: string;
  onFailure?: "compensate";
  defaults?: StepDefaults;
  steps: StepDefinition[];
}

export interface WorkflowInput {
  n?: number;
  fire?: string;
  /** Epoch ms an `until` sleep wakes at, put in at the first start (lib/language.ts). */
  wakeAt?: number;
  /** What a map workflow maps over (lib/map.ts). */
  items?: string[];
}

/** Where a workflow's final view is POSTed when it ends, signed with `secret` (contract v1.2, "Starting from anywhere"). */
export interface Notify {
  url: string;
  secret?: string;
}

/** The body of `POST /v1/workflows`. */
export interface StartPayload {
  id: string;
  input: WorkflowInput;
  definition: Definition;
  notify?: Notify;
  /** A delayed start: `scheduled` until this long after the front door took it. */
  startDelayMs?: number;
}

/** One workflow of the soak, whatever its family, with what the harness predicts about it. */
export interface SoakWorkflow {
  id: string;
  /** Its family: "soak", "burst", "schedule", "stall", … */
  kind: string;
  /** The step the remote declines (422) by design: the workflow must end compensated. */
  declinedStep: string | null;
  /** Whether that step comes before the wait for an event: then the wait is never reached. */
  declinedBeforeWait: boolean;
  /** The soak cancels it, or its parent's cancel closes it: it is left out of the progress threshold. */
  closedByDesign?: boolean;
  language: LanguagePlan | null;
  payload: StartPayload;
}

/** The soak's retry policy: every injected fault is retried within a few seconds. */
export const SOAK_RETRY: RetryPolicy = { maxAttempts: 5, initialIntervalMs: 100, backoffCoefficient: 2, maxIntervalMs: 2_000, jitter: 0.2 };

/**
 * Small timeouts and a fast retry policy, so that every injected fault is detected and retried within a
 * few seconds and 200 workflows fit in a couple of minutes. No scheduleToStartMs: the soak runs the
 * default, which must never fail a workflow because Shepherd's own queue is slow (docs/architecture.md, "Dispatch under
 * load"); a lost dispatch has to be found by the engine, not by a deadline the harness chose. The breaker
 * needs 50 failures in a row to open: the remote's faults alone would trip the default 5 (faults.ts says why).
 */
export const SOAK_STEP_DEFAULTS: StepDefaults = {
  retry: SOAK_RETRY,
  timeouts: { heartbeatMs: 1_000 },
  breaker: MAIN_REMOTE_BREAKER,
};

/** A POST to one of the soak's remotes, naming the workflow and the step (then `extra`) in its body. */
export function remotePost(url: string, stepId: string, extra: Record<string, unknown> = {}): HttpAction {
  return { type: "http", url, method: "POST", body: { workflow: "{{ workflow.id }}", step: stepId, ...extra } };
}

/** The id of a small family's i-th workflow (from 0): `chaos-<seed>-<kind>-NNNN`. */
export const familyId = (seed: string, kind: string, i: number): string => `chaos-${seed}-${kind}-${String(i + 1).padStart(4, "0")}`;

/** A workflow of a family the remote never declines by design and that uses no sleep or event. */
export function familyWorkflow(kind: string, payload: StartPayload): SoakWorkflow {
  return { id: payload.id, kind, declinedStep: null, declinedBeforeWait: false, language: null, payload };
}
