import { sweepGraceMs } from "../config";
import { schedulerFor } from "../workflow/client";
import { findOverdueWorkflows } from "../workflow-index/d1-index";
import { allIndexDbs } from "../workflow-index/index-shards";

/** Bounded per shard and run so one invocation stays far below the subrequest limit; the next run takes the rest. */
const SWEEP_BATCH = 200;
const WAKE_CONCURRENCY = 10;

export interface SweepResult {
  overdue: number;
  woken: number;
  failed: number;
  /** Index shards whose overdue query failed this run; the next run reads them again. */
  unreadShards: number;
}

type OverdueWorkflow = { tenant: string; id: string };

/**
 * The supervisor's safety net, run by a cron trigger. Each object's alarm is the supervisor; an alarm that
 * was lost, or that exhausted its retries, would strand its workflow. The index knows every open
 * workflow's deadline as of its last write, so one whose deadline is well past is woken: it acts on what is
 * due, arms its alarm again and refreshes its index entry (so a healthy workflow is woken at most once per
 * stale entry).
 */
export async function sweepOverdueWorkflows(env: Env, now: number): Promise<SweepResult> {
  const { overdue, unreadShards } = await overdueOnEveryShard(env, now - sweepGraceMs(env));
  const { woken, failed } = await wakeAll(env, overdue);
  if (overdue.length > 0) console.log(JSON.stringify({ message: "sweep woke overdue workflows", overdue: overdue.length, woken, failed }));
  return { overdue: overdue.length, woken, failed, unreadShards };
}

/** One overdue query per index shard, side by side: a shard that fails is logged and does not stop the others. */
async function overdueOnEveryShard(env: Env, before: number): Promise<{ overdue: OverdueWorkflow[]; unreadShards: number }> {
  const shards = await Promise.allSettled(allIndexDbs(env).map((db) => findOverdueWorkflows(db, before, SWEEP_BATCH)));
  const overdue: OverdueWorkflow[] = [];
  let unreadShards = 0;
  shards.forEach((result, shard) => {
    if (result.status === "fulfilled") overdue.push(...result.value);
    else {
      unreadShards += 1;
      console.error(JSON.stringify({ message: "sweep could not read an index shard", shard, error: String(result.reason) }));
    }
  });
  return { overdue, unreadShards };
}

/** Wakes each workflow's object, a few at a time; a failed wake is logged and left to the next sweep. */
async function wakeAll(env: Env, overdue: OverdueWorkflow[]): Promise<{ woken: number; failed: number }> {
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
  return { woken, failed };
}
