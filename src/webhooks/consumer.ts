/**
 * The consumer of `shepherd-webhooks`. Each message asks to deliver one workflow's events after a cursor; the
 * consumer does (see deliverEvents) and tells the workflow's object how far it got, which moves the cursor and
 * sends the next message or, after a failure, has its alarm send it again with backoff. Retries of receivers
 * are the object's, through its durable row; the queue retries a message only when the object could not be told.
 */
import { redeliveryDelaySeconds } from "../agents/redelivery";
import { schedulerFor } from "../workflow/client";
import { deliverEvents } from "./deliver-events";
import { WebhookMessageSchema, type WebhookMessage, type WebhookReport } from "./message";

export async function consumeWebhookBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(batch.messages.map((message) => consumeMessage(message, env)));
}

async function consumeMessage(message: Message<unknown>, env: Env): Promise<void> {
  const parsed = WebhookMessageSchema.safeParse(message.body);
  if (!parsed.success) {
    // It can never succeed; the object's lease will lapse and its alarm send a well-formed one.
    console.error(JSON.stringify({ message: "dropping malformed webhook message", id: message.id, issues: parsed.error.issues }));
    message.ack();
    return;
  }
  const report = await deliverOrFail(env, parsed.data);
  try {
    await schedulerFor(env, parsed.data.tenant, parsed.data.workflowId).reportWebhooks(report);
  } catch (error) {
    // What was delivered is recorded in D1, so the message coming again posts nothing twice.
    console.error(JSON.stringify({ message: "could not report webhook deliveries; retrying the message", workflowId: parsed.data.workflowId, error: String(error) }));
    message.retry({ delaySeconds: redeliveryDelaySeconds(message.attempts) });
    return;
  }
  message.ack();
}

/** Anything that kept the work from being done (D1 down, the object unreachable, a bad setting) is a failure to back off from. */
async function deliverOrFail(env: Env, message: WebhookMessage): Promise<WebhookReport> {
  try {
    return await deliverEvents(env, message);
  } catch (error) {
    console.error(JSON.stringify({ message: "webhook delivery could not run; the object will send again", workflowId: message.workflowId, error: String(error) }));
    return { afterSeq: message.afterSeq, throughSeq: message.afterSeq, outcome: "failed" };
  }
}
