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
  /** This poll's own id: the front door abandons it by this id when its worker goes away. */
  pollId: string;
  tenant: string;
  pool: string;
  workerId: string;
  /** When the poll must be answered (epoch ms): its `waitMs` counted from its arrival at the front door. */
  until: number;
  max: number;
}

/** A task as a worker gets it from its poll (the typed client's worker loop uses this shape too). */
export interface WorkerTask {
  /** The attempt's capability: heartbeat, complete and fail are authorised by it alone. */
  token: string;
  workflowId: string;
  stepId: string;
  /** The item's index, for an item of a map step. */
  index?: number;
  attempt: number;
  kind: "action" | "compensation";
  /** The step's `input`, its templates filled in. */
  input: unknown;
  /** The attempt fails when no heartbeat arrives for this long. */
  heartbeatMs: number;
  startToCloseMs: number;
  /** Epoch ms, by the service's clock: the attempt's start-to-close deadline, when its token expires. */
  deadlineAt: number;
  /** The same for every attempt of the step: pass it on so the effect happens once. */
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
