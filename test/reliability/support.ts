// Instruments shared by the fault-matrix tests of rows 12–23: what reaches the task queue (and how big it is),
// the object's own SQLite record and alarm, the cron trigger, and a remote's calls on its task token.
import { createExecutionContext, createScheduledController, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import worker from "../../src/index";
import type { TaskMessage } from "../../src/domain/task-message";
import { schedulerStub } from "../helpers/scheduler";

export interface QueuedMessage {
  body: TaskMessage;
  /** Bytes of the message body as JSON, what counts against the queue's 128 KB message limit. */
  bytes: number;
  /** Kept from the real queue (`swallow`), as if the agent that got it died at once. */
  swallowed: boolean;
}

const encoder = new TextEncoder();
export const byteLength = (value: unknown): number => encoder.encode(JSON.stringify(value) ?? "").byteLength;

/**
 * Records every task message any object sends, through `sendBatch` or `send`. The spy is set on the queue
 * binding of the workflow's object, as `holdBackSends` does; every object shares that binding in the pool, so
 * one spy sees all of them. Messages `swallow` picks never reach the real queue; the rest go on.
 */
export async function watchQueue(id: string, options: { swallow?: (message: TaskMessage) => boolean; tenant?: string } = {}) {
  const sent: QueuedMessage[] = [];
  const swallow = options.swallow ?? (() => false);
  await runInDurableObject(schedulerStub(id, options.tenant), (instance) => {
    const queue = (instance as unknown as { env: Env }).env.TASKS;
    const sendBatch = queue.sendBatch.bind(queue);
    const send = queue.send.bind(queue);
    const record = (body: unknown): QueuedMessage => {
      const entry = { body: body as TaskMessage, bytes: byteLength(body), swallowed: swallow(body as TaskMessage) };
      sent.push(entry);
      return entry;
    };
    vi.spyOn(queue, "sendBatch").mockImplementation(async (messages, sendOptions) => {
      const onward = [...messages].filter((message) => !record(message.body).swallowed);
      return onward.length > 0 ? sendBatch(onward, sendOptions) : ({} as QueueSendBatchResponse);
    });
    vi.spyOn(queue, "send").mockImplementation(async (body, sendOptions) => (record(body).swallowed ? ({} as QueueSendResponse) : send(body, sendOptions)));
  });
  return {
    sent,
    of: (workflowId: string) => sent.filter((entry) => entry.body.workflowId === workflowId),
  };
}

/**
 * Everything the object holds, read straight from its SQLite storage and alarm: a transition is applied
 * whole or not at all exactly when this is all-old or all-new.
 */
export async function objectRecord(id: string, tenant = "default") {
  return runInDurableObject(schedulerStub(id, tenant), async (_instance, state) => {
    const sql = state.storage.sql;
    const hasSchema = sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'workflow'").one().n > 0;
    if (!hasSchema) return { exists: false as const, alarmAt: await state.storage.getAlarm() };
    const workflow = sql.exec<{ status: string; version: number; next_deadline_at: number | null; state_json: string }>(
      "SELECT status, version, next_deadline_at, state_json FROM workflow",
    ).toArray()[0];
    return {
      exists: workflow !== undefined,
      workflow,
      steps: sql.exec<{ step_id: string; state_json: string }>("SELECT step_id, state_json FROM steps ORDER BY position").toArray(),
      events: sql.exec<{ seq: number; type: string; step_id: string | null; attempt: number | null }>("SELECT seq, type, step_id, attempt FROM events ORDER BY seq").toArray(),
      outbox: sql.exec<{ seq: number; payload_json: string; attempts: number }>("SELECT seq, payload_json, attempts FROM outbox").toArray(),
      alarmAt: await state.storage.getAlarm(),
    };
  });
}

export const alarmOf = (id: string, tenant = "default") =>
  runInDurableObject(schedulerStub(id, tenant), (_instance, state) => state.storage.getAlarm());

/** Runs the Worker's own cron handler, as the `* * * * *` trigger would at `scheduledTime`. */
export async function runCron(scheduledTime: number) {
  const controller = createScheduledController({ scheduledTime, cron: "* * * * *" });
  const ctx = createExecutionContext();
  await worker.scheduled(controller, env, ctx);
  await waitOnExecutionContext(ctx);
}

export { callTask } from "./helpers";

/** A promise the test resolves when it chooses, to hold a remote or a write at a point of its choosing. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
