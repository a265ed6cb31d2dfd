import type { WorkflowPlan } from "./definition";

export type WorkflowStatus =
  | "running"
  | "compensating"
  | "needs_attention"
  | "completed"
  | "failed"
  | "compensated"
  | "cancelled";

export type StepStatus =
  | "pending"
  | "scheduled"
  | "running"
  | "waiting"
  | "retrying"
  | "succeeded"
  | "failed"
  | "skipped"
  | "compensating"
  | "compensated"
  | "cancelled";

/** An attempt either performs the step's action or, once the workflow unwinds, its compensation. */
export type AttemptKind = "action" | "compensation";

export type AttemptStatus = "scheduled" | "running" | "waiting" | "succeeded" | "failed" | "timed_out" | "cancelled";

export interface StepError {
  message: string;
  retryable?: boolean;
  /** The remote's HTTP status, when there was one. */
  status?: number;
  /** Why a deadline passed: schedule_to_start, start_to_close, heartbeat or workflow_timeout. */
  timeout?: string;
}

export interface Attempt {
  n: number;
  kind: AttemptKind;
  status: AttemptStatus;
  scheduledAt: number;
  startedAt?: number;
  endedAt?: number;
  lastHeartbeatAt?: number;
  error?: StepError;
}

export interface StepState {
  id: string;
  status: StepStatus;
  /** Number of the step's latest attempt; numbers run on through compensation so each attempt is unique. */
  attempt: number;
  /** Attempts spent against the retry policy: reset when compensation begins and by an operator's retry. */
  budgetUsed: number;
  output?: unknown;
  error?: StepError;
  nextRetryAt?: number;
  lastHeartbeatAt?: number;
  /** The last heartbeat's details, kept across attempts so a retry can resume where the last one stopped. */
  progress?: unknown;
  attempts: Attempt[];
}

export interface CompensationState {
  /** Steps still to compensate, in order; the head is the one being compensated. */
  queue: string[];
  /** Where the workflow ends once the queue is empty. */
  endStatus: "compensated" | "cancelled";
}

export interface WorkflowState {
  tenant: string;
  id: string;
  name: string;
  plan: WorkflowPlan;
  input: unknown;
  status: WorkflowStatus;
  output?: Record<string, unknown>;
  error?: StepError;
  createdAt: number;
  updatedAt: number;
  endedAt?: number;
  /** The whole-workflow deadline (`timeoutMs` after creation). */
  deadlineAt?: number;
  /** Rises by one with every transition that changes the state. */
  version: number;
  /** Ids of succeeded steps in the order they succeeded: compensation walks it backwards. */
  completionOrder: string[];
  compensation?: CompensationState;
  steps: StepState[];
}

export const TERMINAL_WORKFLOW_STATUSES: readonly WorkflowStatus[] = ["completed", "failed", "compensated", "cancelled"];

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
