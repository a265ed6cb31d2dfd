/**
 * Where a worker task goes: an attempt whose action is a `worker` action is offered to a pool of the user's own
 * workers (one object per tenant and pool, see pools/), not sent through our queue. Pure reads of the plan and the
 * attempt; what the supervisor does with them is pool-offers.ts.
 */
import { poolAfterMoves, type WorkerAction } from "../language/actions";
import type { StepPlan } from "../language/plan";
import type { PoolOffer } from "./effects";
import type { Attempt, AttemptKind, WorkflowState } from "./state";

/** A priority no start or step set: the middle of 1..5. */
export const DEFAULT_PRIORITY = 3;

/** The worker action an attempt of this kind performs, if its action is one. */
export function workerActionOf(plan: StepPlan, kind: AttemptKind): WorkerAction | undefined {
  const action = kind === "action" ? (plan.kind === "action" ? plan.action : undefined) : plan.compensate;
  return action?.type === "worker" ? action : undefined;
}

/** When a task still waiting in its pool moves to the next one; undefined when there is no next. */
export function reassignAt(attempt: Attempt, action: WorkerAction | undefined): number | undefined {
  if (!action?.fallback || attempt.offeredAt === undefined) return undefined;
  return poolAfterMoves(action, (attempt.poolMoves ?? 0) + 1) === undefined ? undefined : attempt.offeredAt + action.fallback.afterMs;
}

/** The offer of a task to `pool`: its priority (the step's, else the workflow's) and the workflow's fairness key. */
export function poolOffer(state: WorkflowState, plan: StepPlan, pool: string): PoolOffer {
  return { pool, priority: plan.priority ?? state.priority ?? DEFAULT_PRIORITY, fairnessKey: state.fairnessKey ?? "" };
}
