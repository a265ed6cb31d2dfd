// A workflow's Scheduler object as the tests reach it: its stub, and what it holds, read straight from its SQLite
// tables and its alarm rather than through its own code.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";

export function schedulerStub(id: string, tenant = "default") {
  return env.WORKFLOW_SCHEDULER.getByName(`${tenant}:${id}`);
}

export type WorkflowRow = { status: string; version: number; next_deadline_at: number | null; state_json: string; open_steps_json: string | null };
export type StepRow = { step_id: string; state_json: string };
export type EventRow = { seq: number; type: string; step_id: string | null; attempt: number | null };
/** History's events as one row each (the object keeps one row per commit, holding its events). */
const EVENTS_SQL = `SELECT history.first_seq + each.key AS seq, json_extract(each.value, '$.type') AS type,
  json_extract(each.value, '$.stepId') AS step_id, json_extract(each.value, '$.attempt') AS attempt
  FROM history, json_each(history.events_json) AS each ORDER BY seq`;
export type OutboxRow = { seq: number; kind: string; payload_json: string; attempts: number; next_attempt_at: number };

/**
 * Everything the object holds, read straight from its SQLite storage and alarm: a transition is applied whole
 * or not at all exactly when this is all-old or all-new. An object that never stored a workflow has no schema.
 */
export async function objectRecord(id: string, tenant = "default") {
  return runInDurableObject(schedulerStub(id, tenant), async (_instance, state) => {
    const sql = state.storage.sql;
    const hasSchema = sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'workflow'").one().n > 0;
    if (!hasSchema) return { exists: false as const, alarmAt: await state.storage.getAlarm() };
    const workflow = sql.exec<WorkflowRow>("SELECT status, version, next_deadline_at, state_json, open_steps_json FROM workflow").toArray()[0];
    return {
      exists: workflow !== undefined,
      workflow,
      steps: sql.exec<StepRow>("SELECT step_id, state_json FROM steps ORDER BY position").toArray(),
      events: sql.exec<EventRow>(EVENTS_SQL).toArray(),
      outbox: sql.exec<OutboxRow>("SELECT seq, kind, payload_json, attempts, next_attempt_at FROM outbox ORDER BY seq").toArray(),
      alarmAt: await state.storage.getAlarm(),
    };
  });
}

/** When the object's alarm is set for, or null. */
export const alarmOf = (id: string, tenant = "default") =>
  runInDurableObject(schedulerStub(id, tenant), (_instance, state) => state.storage.getAlarm());
