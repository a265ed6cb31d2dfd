/**
 * A pool object's own storage: its pending tasks (one row per attempt offered to it), the tasks it handed out and
 * not yet heard of (for `running`), and the workers seen polling. The only module of the pool that speaks SQL.
 */
import type { PendingTask } from "../domain/pools/pool-queue";

/** A task as the pool keeps it: where it stands in the queue, and the attempt it names. */
export interface PoolTask extends PendingTask {
  tenant: string;
  workflowId: string;
  stepId: string;
  attempt: number;
}

export interface HandedTask {
  key: string;
  deadlineAt: number;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS tasks (
    key TEXT PRIMARY KEY, tenant TEXT NOT NULL, workflow_id TEXT NOT NULL, step_id TEXT NOT NULL, attempt INTEGER NOT NULL,
    priority INTEGER NOT NULL, fairness_key TEXT NOT NULL, offered_at INTEGER NOT NULL, seq INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS handed (key TEXT PRIMARY KEY, deadline_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS workers (id TEXT PRIMARY KEY, last_poll_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`;

type TaskRecord = { key: string; tenant: string; workflow_id: string; step_id: string; attempt: number; priority: number; fairness_key: string; offered_at: number };

export class PoolRows {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  /** Every pending task, in the order they were offered. */
  tasks(): PoolTask[] {
    return this.sql
      .exec<TaskRecord>("SELECT key, tenant, workflow_id, step_id, attempt, priority, fairness_key, offered_at FROM tasks ORDER BY seq")
      .toArray()
      .map((r) => ({ key: r.key, tenant: r.tenant, workflowId: r.workflow_id, stepId: r.step_id, attempt: r.attempt, priority: r.priority, fairnessKey: r.fairness_key, offeredAt: r.offered_at }));
  }

  insert(task: PoolTask, seq: number): void {
    this.sql.exec(
      "INSERT OR IGNORE INTO tasks (key, tenant, workflow_id, step_id, attempt, priority, fairness_key, offered_at, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      task.key, task.tenant, task.workflowId, task.stepId, task.attempt, task.priority, task.fairnessKey, task.offeredAt, seq,
    );
  }

  delete(key: string): void {
    this.sql.exec("DELETE FROM tasks WHERE key = ?", key);
  }

  /** A task handed to a worker leaves the pending rows and counts as running until its deadline or its report. */
  hand(key: string, deadlineAt: number): void {
    this.sql.exec("DELETE FROM tasks WHERE key = ?", key);
    this.sql.exec("INSERT OR REPLACE INTO handed (key, deadline_at) VALUES (?, ?)", key, deadlineAt);
  }

  finished(key: string): void {
    this.sql.exec("DELETE FROM handed WHERE key = ?", key);
  }

  /** Tasks handed out whose deadline has not passed (those past it are dropped: the supervisor owns them now). */
  running(now: number): number {
    this.sql.exec("DELETE FROM handed WHERE deadline_at < ?", now);
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM handed").one().n;
  }

  sawWorker(id: string, at: number): void {
    this.sql.exec("INSERT INTO workers (id, last_poll_at) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET last_poll_at = excluded.last_poll_at", id, at);
  }

  /** Workers that polled since `since`, the latest first; older ones are forgotten. */
  workers(since: number): { id: string; lastPollAt: number }[] {
    this.sql.exec("DELETE FROM workers WHERE last_poll_at < ?", since);
    return this.sql
      .exec<{ id: string; last_poll_at: number }>("SELECT id, last_poll_at FROM workers ORDER BY last_poll_at DESC LIMIT 100")
      .toArray()
      .map((r) => ({ id: r.id, lastPollAt: r.last_poll_at }));
  }

  meta(key: string): string | undefined {
    return this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0]?.value;
  }

  setMeta(key: string, value: string): void {
    this.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, value);
  }
}
