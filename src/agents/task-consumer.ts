import { TaskMessageSchema } from "../domain/machine/task-message";
import { agentHostFor } from "./host-shard";
import { reportQueueLag } from "../admission/queue-lag-monitor";
import { redeliveryDelaySeconds } from "./redelivery";

/**
 * The agents' front: the queue consumer hands each attempt to an agent host, which claims it from its
 * workflow's object and performs it. A message is acknowledged only once a host has taken it (or refused it
 * as stale): a consumer that dies before that leaves it to the queue to deliver again, so a dispatch is never
 * lost and never uses an attempt. No remote call holds the batch. (A consumer runs one batch at a time
 * locally, and a batch's invocation stays open until all of its work, `waitUntil` included, is done: a slow
 * remote would hold up everyone queued behind it.)
 */
export async function consumeTaskBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const lag = reportQueueLag(env, batch, Date.now());
  // Every message gets its answer (ack or retry) before a crash of one is passed on, so the crash only
  // sends back the messages it did not get to.
  const outcomes = await Promise.allSettled(
    batch.messages.map(async (message) => {
      const parsed = TaskMessageSchema.safeParse(message.body);
      if (!parsed.success) {
        // A malformed message can never succeed: retrying it would only delay the dead-letter queue.
        console.error(JSON.stringify({ message: "dropping malformed task message", id: message.id, issues: parsed.error.issues }));
        message.ack();
        return;
      }
      try {
        await agentHostFor(env, parsed.data).take(parsed.data);
      } catch (error) {
        // No host or object could be reached (reset, overloaded): deliver again later; after max_retries the
        // message goes to the dead-letter queue, whose consumer has the object send it again.
        console.error(JSON.stringify({ message: "hand-off failed; retrying delivery", id: message.id, error: String(error) }));
        message.retry({ delaySeconds: redeliveryDelaySeconds(message.attempts) });
        return;
      }
      message.ack();
    }),
  );
  await lag;
  const crash = outcomes.find((outcome) => outcome.status === "rejected");
  if (crash) throw crash.reason;
}
