import { sweepGraceMs } from "../config";
import { schedulerFor } from "../scheduler/scheduler-client";
import { findOverdueWorkflows } from "../workflow-index/d1-index";

/** Bounded per run so one invocation stays far below the subrequest limit; the next run takes the rest. */
const SWEEP_BATCH = 200;
const WAKE_CONCURRENCY = 10;

export interface SweepResult {
  overdue: number;
  woken: number;
  failed: number;
}

/**
 * The supervisor's safety net, run by a cron trigger. Each object's alarm is the supervisor; an alarm that
 * was lost, or that exhausted its retries, would strand its workflow. The index knows every open
 * workflow's deadline as of its last write, so one whose deadline is well past is woken: it acts on what is
 * due, arms its alarm again and refreshes its index entry (so a healthy workflow is woken at most once per
 * stale entry).
 */
export async function sweepOverdueWorkflows(env: Env, now: number): Promise<SweepResult> {
  const overdue = await findOverdueWorkflows(env.DB, now - sweepGraceMs(env), SWEEP_BATCH);
  let woken = 0;
  let failed = 0;
  let next = 0;
  const worker = async () => {
    while (next < overdue.length) {
      const workflow = overdue[next++]!;
      try {
        await schedulerFor(env, workflow.tenant, workflow.id).wake();
        woken += 1;
      } catch (error) {
        failed += 1;
        console.error(JSON.stringify({ message: "sweep could not wake a workflow", tenant: workflow.tenant, workflowId: workflow.id, error: String(error) }));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(WAKE_CONCURRENCY, overdue.length) }, worker));
  if (overdue.length > 0) console.log(JSON.stringify({ message: "sweep woke overdue workflows", overdue: overdue.length, woken, failed }));
  return { overdue: overdue.length, woken, failed };
}
