/** What goes in and out of a pool object (contract v1.2, "The user's own agents: worker pools"). */

/** An attempt offered to a pool by its workflow's object (the outbox's `pool` row). */
export interface PoolTaskOffer {
  tenant: string;
  pool: string;
  workflowId: string;
  stepId: string;
  attempt: number;
  priority: number;
  fairnessKey: string;
}

export interface PollRequest {
  tenant: string;
  pool: string;
  workerId: string;
  waitMs: number;
  max: number;
}

/** A task as a worker gets it from its poll. */
export interface WorkerTask {
  token: string;
  workflowId: string;
  stepId: string;
  index?: number;
  attempt: number;
  kind: "action" | "compensation";
  input: unknown;
  heartbeatMs: number;
  startToCloseMs: number;
  deadlineAt: number;
  idempotencyKey: string;
}

export interface PoolStats {
  name: string;
  pending: number;
  oldestPendingAgeMs: number | null;
  running: number;
  workers: { id: string; lastPollAt: number }[];
}

/** Workers seen polling within this long are listed; a pool none polled for this long shows as waiting for one. */
export const WORKER_SEEN_MS = 5 * 60_000;
/** The longest a poll waits for a task (contract: at most 60 s). */
export const MAX_POLL_WAIT_MS = 60_000;
