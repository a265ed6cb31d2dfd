import { verifyEarlierEffect } from "../agents/verify";
import { targetPolicyFor } from "../config";
import type { ClaimedTask } from "../domain/machine";
import { schedulerFor } from "../workflow/client";

/**
 * A worker step's `verify` works as an http step's: before a worker is handed an attempt that follows one with no
 * answer (a worker that died or went silent mid-task), the pool asks the step's `verify` endpoint whether the earlier
 * effect landed. A 2xx answer ends the step with that output (history `step_verified`) and no worker is given the
 * task; anything else, or no answer, hands it out as usual. The check is bounded by the attempt's deadline.
 *
 * Returns true when the step was verified (the task must not be handed out).
 */
export async function verifiedBeforeHandOut(env: Env, tenant: string, task: ClaimedTask): Promise<boolean> {
  if (!task.verify) return false;
  const signal = AbortSignal.timeout(Math.max(1, task.deadlineAt - Date.now()));
  try {
    const verified = (await verifyEarlierEffect(task, task.token ?? "", targetPolicyFor(env, tenant), signal))?.verified;
    if (!verified) return false;
    await schedulerFor(env, tenant, task.workflowId).report(task.stepId, task.attempt, verified);
    return true;
  } catch (error) {
    // A broken setting or an unreachable object: the worker does the attempt; its idempotency key covers a repeat.
    console.error(JSON.stringify({ message: "verify before hand-out failed; the task goes to the worker", workflowId: task.workflowId, stepId: task.stepId, error: String(error) }));
    return false;
  }
}
