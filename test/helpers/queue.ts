// The task queues as the tests see them: what the objects send to them (and what the test keeps back from them), and
// what they deliver to the consumer and what the consumer answers.
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import worker from "../../src/index";
import type { TaskMessage } from "../../src/domain/machine/task-message";
import { taskQueueBinding, taskQueueShards } from "../../src/config";
import { taskQueueFor, taskQueueShardOf } from "../../src/workflow/task-queues";
import { uniqueId } from "./api";

export interface SentTask {
  /** When the object sent it. */
  at: number;
  message: TaskMessage;
  /** Bytes of the message body as JSON, what counts against the queue's 128 KB message limit. */
  bytes: number;
  /** Kept back from the real queue (see `watchSends`). */
  held: boolean;
  released: boolean;
}

const encoder = new TextEncoder();
export const byteLength = (value: unknown): number => encoder.encode(JSON.stringify(value) ?? "").byteLength;

/**
 * The task queue a workflow's messages go to under the tests' configuration (TASK_QUEUE_SHARDS in vitest.config.ts),
 * from the test's bindings or an object's (`instance.env`) for a spy set inside the object.
 */
export function taskQueueOf(workflowId: string, bindings: Env = env): Queue {
  return taskQueueFor(bindings, workflowId);
}

/** The name the consumer sees on a batch from that queue (`shepherd-tasks`, `shepherd-tasks-1`, ...). */
export function taskQueueNameOf(workflowId: string): string {
  const shard = taskQueueShardOf(workflowId, taskQueueShards(env));
  return shard === 0 ? "shepherd-tasks" : `shepherd-tasks-${shard}`;
}

/**
 * `count` unique workflow ids whose messages all take one task queue, for a test that needs them to arrive as one
 * batch: the last queue in use, so with more than one the test runs on a sharded queue.
 */
export function uniqueIdsOnOneQueue(count: number, prefix?: string): string[] {
  const shards = taskQueueShards(env);
  const ids: string[] = [];
  while (ids.length < count) {
    const id = uniqueId(prefix);
    if (taskQueueShardOf(id, shards) === shards - 1) ids.push(id);
  }
  return ids;
}

/** Every task queue binding there is, whatever TASK_QUEUE_SHARDS says. */
export function boundTaskQueues(): Queue[] {
  const queues: Queue[] = [];
  for (let shard = 0; taskQueueBinding(env, shard) !== undefined; shard++) queues.push(taskQueueBinding(env, shard)!);
  return queues;
}

/**
 * Records every task message sent to any task queue, whether through `send` or `sendBatch`: every object shares
 * the test's bindings, so one spy per queue sees them all. The messages `hold` picks are kept back from the real
 * queue, as if the agent that received them died before doing anything (or the queue lost them); `release` hands
 * them to the real queue later. The rest go on to the real queue. One watch per test: `vi.restoreAllMocks()` ends it.
 */
export function watchSends(hold: (message: TaskMessage) => boolean = () => false) {
  const sent: SentTask[] = [];
  const record = (body: unknown): SentTask => {
    const message = body as TaskMessage;
    const entry = { at: Date.now(), message, bytes: byteLength(body), held: hold(message), released: false };
    sent.push(entry);
    return entry;
  };
  const realSends = new Map(boundTaskQueues().map((queue) => [queue, spyOnSends(queue, record)]));
  /** Sends around the spies, to the queue the workflow's messages take (the first queue for a body without one). */
  const sendAround = async (bodies: unknown[]) => {
    const byQueue = new Map<Queue, unknown[]>();
    for (const body of bodies) {
      const workflowId = (body as Partial<TaskMessage> | null)?.workflowId;
      const queue = typeof workflowId === "string" ? taskQueueOf(workflowId) : env.TASKS;
      byQueue.set(queue, [...(byQueue.get(queue) ?? []), body]);
    }
    for (const [queue, group] of byQueue) await realSends.get(queue)!(group.map((body) => ({ body })));
  };
  return {
    sent,
    /** The messages sent for one workflow, in order. */
    of: (workflowId: string) => sent.filter((entry) => entry.message.workflowId === workflowId),
    /** Sends the held messages `which` picks to the real queue (around the spy, so they are not recorded twice). */
    async release(which: (message: TaskMessage) => boolean = () => true) {
      const due = sent.filter((entry) => entry.held && !entry.released && which(entry.message));
      for (const entry of due) entry.released = true;
      if (due.length > 0) await sendAround(due.map((entry) => entry.message));
      return due.length;
    },
    /** Sends messages to the real queue as one batch per queue, around the spy. */
    sendBatchToQueue: sendAround,
  };
}

/** Puts the spy on one queue's sends; answers its real `sendBatch`, for sending around the spy. */
function spyOnSends(queue: Queue, record: (body: unknown) => SentTask): Queue["sendBatch"] {
  if (vi.isMockFunction(queue.sendBatch) || vi.isMockFunction(queue.send)) throw new Error("the task queues are already watched in this test: use one watchSends");
  const sendBatch = queue.sendBatch.bind(queue);
  const send = queue.send.bind(queue);
  vi.spyOn(queue, "sendBatch").mockImplementation(async (messages, options) => {
    const onward = [...messages].filter((message) => !record(message.body).held);
    if (onward.length > 0) return sendBatch(onward, options);
    return {} as QueueSendBatchResponse;
  });
  vi.spyOn(queue, "send").mockImplementation(async (body, options) => (record(body).held ? ({} as QueueSendResponse) : send(body, options)));
  return sendBatch;
}

/**
 * Holds back the first `count` task messages of one workflow, as if the agent that received them died before
 * doing anything; later ones go to the real queue. Call before starting the workflow. The array fills as they
 * are sent.
 */
export function holdBackSends(workflowId: string, count = 1): TaskMessage[] {
  const held: TaskMessage[] = [];
  watchSends((message) => {
    if (message.workflowId !== workflowId || held.length >= count) return false;
    held.push(message);
    return true;
  });
  return held;
}

export interface Delivery {
  queue: string;
  /** Which invocation of the queue handler (1, 2, ...) got it. */
  batch: number;
  batchSize: number;
  id: string;
  attempts: number;
  body: TaskMessage;
  /** What the consumer answered for it: ack, retry, or nothing (a crash sends it back). */
  answer?: "ack" | "retry";
}

/**
 * Wraps the Worker's queue handler (the real queue calls it through the module's default export) to record
 * every delivery and the consumer's answer to each message. `loseAck` picks deliveries whose ack is swallowed,
 * followed by a crash of the invocation once its work is done, so the real queue delivers them again: an ack lost
 * on the way back.
 */
export function watchDeliveries(options: { loseAck?: (delivery: Delivery) => boolean } = {}) {
  const deliveries: Delivery[] = [];
  const handler = worker.queue.bind(worker);
  let batches = 0;
  vi.spyOn(worker, "queue").mockImplementation(async (batch, handlerEnv, ctx) => {
    batches += 1;
    let lost = 0;
    const messages = batch.messages.map((message) => {
      const delivery: Delivery = { queue: batch.queue, batch: batches, batchSize: batch.messages.length, id: message.id, attempts: message.attempts, body: message.body as TaskMessage };
      deliveries.push(delivery);
      const loseAck = options.loseAck?.(delivery) ?? false;
      return {
        id: message.id,
        timestamp: message.timestamp,
        attempts: message.attempts,
        body: message.body,
        ack() {
          delivery.answer ??= "ack";
          if (loseAck) lost += 1;
          else message.ack();
        },
        retry(retryOptions?: QueueRetryOptions) {
          delivery.answer ??= "retry";
          message.retry(retryOptions);
        },
      };
    });
    const wrapped = { queue: batch.queue, messages, ackAll: () => messages.forEach((m) => m.ack()), retryAll: () => messages.forEach((m) => m.retry()) };
    await handler(wrapped as unknown as MessageBatch<unknown>, handlerEnv, ctx);
    if (lost > 0) throw new Error(`the consumer's ack of ${lost} message(s) was lost`);
  });
  return {
    deliveries,
    of: (workflowId: string) => deliveries.filter((delivery) => delivery.body?.workflowId === workflowId),
  };
}
