/**
 * A worker task waits in its pool until a worker's poll takes it; with a fallback, the supervisor moves a task no
 * worker took within `afterMs` to the next pool, the same attempt (no attempt used).
 */
import { poolAfterMoves } from "../language/actions";
import type { TransitionContext } from "./context";
import { poolOffer, workerActionOf } from "./pool-placement";
import type { Attempt, StepState } from "./state";

/** No worker of its pool took the task in time: it moves to the next pool (history `task_reassigned`). */
export function reassignTask(ctx: TransitionContext, step: StepState, attempt: Attempt): void {
  const plan = ctx.plan(step.id);
  const action = workerActionOf(plan, attempt.kind);
  const moves = (attempt.poolMoves ?? 0) + 1;
  const next = action && poolAfterMoves(action, moves);
  if (next === undefined || attempt.pool === undefined) return;
  const from = attempt.pool;
  ctx.record({ type: "task_reassigned", stepId: step.id, attempt: attempt.n, data: { from, to: next, waitedMs: ctx.now - (attempt.offeredAt ?? ctx.now) } });
  attempt.pool = next;
  attempt.poolMoves = moves;
  attempt.offeredAt = ctx.now;
  ctx.changed = true;
  const offer = { ...poolOffer(ctx.state, plan, next), withdrawFrom: from };
  ctx.effects.push({ type: "EnqueueAttempt", stepId: step.id, attempt: attempt.n, kind: attempt.kind, offer });
}

/**
 * The attempt ended while it still waited in its pool (no worker claimed it): the pool is told to drop it, so its
 * pending count and oldest age are the live tasks'. Should the withdrawal be lost, the pool's claim of the task is
 * refused and it drops the task then.
 */
export function withdrawUnclaimed(ctx: TransitionContext, stepId: string, attempt: Attempt): void {
  if (attempt.pool === undefined || attempt.startedAt !== undefined) return;
  ctx.effects.push({ type: "WithdrawTask", stepId, attempt: attempt.n, pool: attempt.pool });
}
