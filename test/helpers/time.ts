// Time in the tests. A deadline (a heartbeat, a start-to-close, a backoff, a retry of a send or an index write)
// is not waited for: the workflow's stored times are moved back, as if that long had passed, and its alarm is
// run as the runtime would run it by then. So a test takes no longer, and is no flakier, for a timeout of
// minutes than for one of milliseconds. `sleep` is left for what is about real time itself.
import { createExecutionContext, createScheduledController, evictDurableObject, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import { indexDbFor } from "../../src/workflow-index/index-shards";
import { alarmOf, schedulerStub } from "./scheduler";

/** Times not named `…At`: the contract's `attentionDeadline`. */
const OTHER_TIMES = new Set(["attentionDeadline"]);

/** Top-level fields named `…At` hold times; nested values (inputs, outputs, progress) are the user's and stay. */
function shiftTimes(record: Record<string, unknown>, ms: number): void {
  for (const [key, value] of Object.entries(record)) {
    if ((key.endsWith("At") || OTHER_TIMES.has(key)) && typeof value === "number") record[key] = value - ms;
  }
}

/** `nested`: a list of records (a step's attempts) or one record (an index entry's triage) whose times move too. */
function shiftedJson(json: string, ms: number, nested?: string): string {
  const record = JSON.parse(json) as Record<string, unknown>;
  shiftTimes(record, ms);
  const inner = nested === undefined ? undefined : (record[nested] as Record<string, unknown> | Record<string, unknown>[] | undefined);
  for (const item of Array.isArray(inner) ? inner : inner ? [inner] : []) shiftTimes(item, ms);
  return JSON.stringify(record);
}

/**
 * Moves every stored time of one workflow `ms` into the past, as if that long had gone by since: the workflow's
 * own times and deadline, each step's and attempt's, its history, its outbox (the next delivery and the index
 * entry waiting to be written) and its row in the D1 index. The alarm is left where it is (`fireAlarm` runs it).
 * The object is evicted, since it keeps in memory what it loaded: the next call reads the moved rows.
 */
export async function backdate(id: string, { ms, tenant = "default" }: { ms: number; tenant?: string }): Promise<void> {
  await runInDurableObject(schedulerStub(id, tenant), (_instance, state) => {
    const sql = state.storage.sql;
    state.storage.transactionSync(() => {
      for (const row of sql.exec<{ state_json: string; open_steps_json: string | null }>("SELECT state_json, open_steps_json FROM workflow").toArray()) {
        // The plan's open steps ride on the workflow's row (step-rows.ts): each is moved as a step's row is.
        const open = row.open_steps_json === null ? null : Object.fromEntries(Object.entries(JSON.parse(row.open_steps_json) as Record<string, unknown>).map(([id, step]) => [id, JSON.parse(shiftedJson(JSON.stringify(step), ms, "attempts"))]));
        sql.exec("UPDATE workflow SET state_json = ?, open_steps_json = ?, next_deadline_at = next_deadline_at - ?", shiftedJson(row.state_json, ms), open && JSON.stringify(open), ms);
      }
      for (const row of sql.exec<{ step_id: string; state_json: string }>("SELECT step_id, state_json FROM steps").toArray()) {
        sql.exec("UPDATE steps SET state_json = ? WHERE step_id = ?", shiftedJson(row.state_json, ms, "attempts"), row.step_id);
      }
      sql.exec("UPDATE history SET at = at - ?", ms);
      for (const row of sql.exec<{ seq: number; kind: string; payload_json: string }>("SELECT seq, kind, payload_json FROM outbox").toArray()) {
        const payload = row.kind === "index" ? shiftedJson(row.payload_json, ms, "triage") : row.payload_json;
        sql.exec("UPDATE outbox SET payload_json = ?, next_attempt_at = next_attempt_at - ? WHERE seq = ?", payload, ms, row.seq);
      }
    });
  });
  await indexDbFor(env, tenant, id).prepare(
    `UPDATE workflows SET created_at = created_at - ?1, updated_at = updated_at - ?1, ended_at = ended_at - ?1,
       next_deadline_at = next_deadline_at - ?1, start_at = start_at - ?1, summary_deadline_at = summary_deadline_at - ?1
     WHERE tenant = ?2 AND id = ?3`,
  )
    .bind(ms, tenant, id)
    .run();
  await evictDurableObject(schedulerStub(id, tenant));
}

/** Runs the object's alarm now, as the runtime does once it is due; false when no alarm is set. */
export function fireAlarm(id: string, tenant = "default"): Promise<boolean> {
  return runDurableObjectAlarm(schedulerStub(id, tenant));
}

/**
 * Lets `ms` pass for one workflow: its stored times move back by `ms` and its alarm runs, as the runtime would
 * have run it by then. Throws when no alarm would have fired within `ms`: nothing would have woken the object.
 */
export async function elapse(id: string, ms: number, tenant = "default"): Promise<void> {
  const alarmAt = await alarmOf(id, tenant);
  if (alarmAt === null || alarmAt > Date.now() + ms) {
    throw new Error(`no alarm of ${tenant}:${id} falls within ${ms} ms (it is ${alarmAt === null ? "not set" : `set ${alarmAt - Date.now()} ms on`})`);
  }
  await backdate(id, { ms, tenant });
  await fireAlarm(id, tenant);
}

/** Runs the Worker's own cron handler, as the `* * * * *` trigger would at `scheduledTime`. */
export async function runCron(scheduledTime: number): Promise<void> {
  const controller = createScheduledController({ scheduledTime, cron: "* * * * *" });
  const ctx = createExecutionContext();
  await worker.scheduled(controller, env, ctx);
  await waitOnExecutionContext(ctx);
}

/** Real time, for the few tests about real time itself (the platform's own retries, an agent's own timer). */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
