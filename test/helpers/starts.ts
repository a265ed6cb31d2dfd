// The STARTS queue as the tests drive it: batches delivered to the Worker's consumer as the queue would (a message's
// id and delivery count included), what the consumer answered, and the dead letters as an operator reads them.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import { forgetQueueLagReads } from "../../src/admission/queue-lag-monitor";
import { api, bearer, type TestTenant } from "./api";

export interface Delivered {
  id: string;
  body: unknown;
  /** The delivery this is: 1 the first, 2 a redelivery ... */
  attempts?: number;
}

/**
 * One batch delivered to the consumer of `queue`, of a deployment with `settings` besides the tests' own; what it
 * answered for each message, and the delay it asked for each retried one (`getQueueResult` reports which were
 * retried, not their delays).
 */
export async function deliver(queue: "shepherd-starts" | "shepherd-starts-dlq", messages: Delivered[], settings: Partial<Env> = {}) {
  const batch = createMessageBatch(
    queue,
    messages.map(({ id, body, attempts = 1 }) => ({ id, timestamp: new Date(), attempts, body })),
  );
  const delays: Record<string, number | undefined> = {};
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    message.retry = (options?: QueueRetryOptions) => {
      delays[message.id] = options?.delaySeconds;
      retry(options);
    };
  }
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...settings }, ctx);
  return { ...(await getQueueResult(batch, ctx)), delays };
}

export const deliverStarts = (messages: Delivered[], settings: Partial<Env> = {}) => deliver("shepherd-starts", messages, settings);

/** A definition that waits for an event a day long: a started workflow stays put while the test looks at it. */
export const waitingDefinition = (name: string) => ({ name, steps: [{ id: "hold", waitForEvent: { event: "done", timeoutMs: 86_400_000 } }] });

export interface DeadLetterView {
  messageId: string;
  tenant: string | null;
  workflowId: string | null;
  error: { code: string; message: string; details?: { path: (string | number)[]; message: string }[] };
  body: string;
  bodyTruncated: boolean;
  attempts: number;
  firstSeenAt: number;
  lastSeenAt: number;
}

/** Every dead letter `tenant` sees, newest first, through the route (all pages). */
export async function deadLettersOf(tenant: TestTenant = "default"): Promise<DeadLetterView[]> {
  const all: DeadLetterView[] = [];
  let cursor: string | undefined;
  do {
    const page = await api("GET", `/v1/starts/dead-letters?limit=100${cursor ? `&cursor=${cursor}` : ""}`, undefined, { headers: bearer(tenant) });
    if (page.status !== 200) throw new Error(`GET /v1/starts/dead-letters answered ${page.status}: ${JSON.stringify(page.body)}`);
    all.push(...page.body.deadLetters);
    cursor = page.body.nextCursor;
  } while (cursor);
  return all;
}

/**
 * The dead letters the holder of `token` sees (the first page) when the deployment has these settings besides the tests' own:
 * the route run by the Worker's fetch handler with them.
 */
export async function deadLettersWithSettings(token: string, settings: Partial<Env>): Promise<DeadLetterView[]> {
  const request = new Request("http://shepherd.test/v1/starts/dead-letters?limit=100", { headers: { Authorization: `Bearer ${token}` } });
  const response = await worker.fetch!(request as Request<unknown, IncomingRequestCfProperties>, { ...env, ...settings }, createExecutionContext());
  if (response.status !== 200) throw new Error(`GET /v1/starts/dead-letters answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { deadLetters: DeadLetterView[] }).deadLetters;
}

/** The dead letter of one message, as `tenant` sees it. */
export async function deadLetterOf(messageId: string, tenant: TestTenant = "default"): Promise<DeadLetterView | undefined> {
  return (await deadLettersOf(tenant)).find((letter) => letter.messageId === messageId);
}

let clock = Date.now();

/**
 * The task queues' consumers report `lagMs` of lag, all of it `tenant`'s `name` workflows: back-pressure refuses
 * exactly those starts while it is past the bound. Each report is later than any before it, so it starts a window
 * of its own; `lagMs` 0 ends the burst.
 */
export async function queueLagOf(lagMs: number, tenant = "default", name = "noisy"): Promise<void> {
  clock = Math.max(clock, Date.now()) + 60_000;
  await env.QUEUE_LAG.getByName("task-queue").record({ queue: "shepherd-tasks", lagMs, at: clock, deliveries: lagMs > 0 ? [{ tenant, name, count: 500 }] : [] });
  forgetQueueLagReads();
}
