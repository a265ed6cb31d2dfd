// The task queue as the tests see it: what the objects send to it (and what the test keeps back from it), and
// what it delivers to the consumer and what the consumer answers.
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import worker from "../../src/index";
import type { TaskMessage } from "../../src/domain/task-message";

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
 * Records every task message sent to TASKS, whether through `send` or `sendBatch`: every object shares the
 * test's binding, so one spy sees them all. The messages `hold` picks are kept back from the real queue, as if
 * the agent that received them died before doing anything (or the queue lost them); `release` hands them to the
 * real queue later. The rest go on to the real queue. One watch per test: `vi.restoreAllMocks()` ends it.
 */
export function watchSends(hold: (message: TaskMessage) => boolean = () => false) {
  const queue = env.TASKS;
  if (vi.isMockFunction(queue.sendBatch) || vi.isMockFunction(queue.send)) throw new Error("TASKS is already watched in this test: use one watchSends");
  const sent: SentTask[] = [];
  const sendBatch = queue.sendBatch.bind(queue);
  const send = queue.send.bind(queue);
  const record = (body: unknown): SentTask => {
    const message = body as TaskMessage;
    const entry = { at: Date.now(), message, bytes: byteLength(body), held: hold(message), released: false };
    sent.push(entry);
    return entry;
  };
  vi.spyOn(queue, "sendBatch").mockImplementation(async (messages, options) => {
    const onward = [...messages].filter((message) => !record(message.body).held);
    if (onward.length > 0) return sendBatch(onward, options);
    return {} as QueueSendBatchResponse;
  });
  vi.spyOn(queue, "send").mockImplementation(async (body, options) => (record(body).held ? ({} as QueueSendResponse) : send(body, options)));
  return {
    sent,
    /** The messages sent for one workflow, in order. */
    of: (workflowId: string) => sent.filter((entry) => entry.message.workflowId === workflowId),
    /** Sends the held messages `which` picks to the real queue (around the spy, so they are not recorded twice). */
    async release(which: (message: TaskMessage) => boolean = () => true) {
      const due = sent.filter((entry) => entry.held && !entry.released && which(entry.message));
      for (const entry of due) entry.released = true;
      if (due.length > 0) await sendBatch(due.map((entry) => ({ body: entry.message })));
      return due.length;
    },
    /** Sends messages to the real queue as one batch, around the spy. */
    sendBatchToQueue: (bodies: unknown[]) => sendBatch(bodies.map((body) => ({ body }))),
  };
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
