import { TaskMessageSchema } from "../domain/machine/task-message";
import { schedulerFor } from "../workflow/client";
import { redeliveryDelaySeconds } from "./redelivery";

/**
 * The dead-letter queue's consumer. A task message lands here when delivering it failed `max_retries`
 * times; it is recorded on its workflow's history (and an unclaimed attempt fails as retryable, so the
 * retry policy takes over) instead of being dropped.
 */
export async function recordDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = TaskMessageSchema.safeParse(message.body);
      if (!parsed.success) {
        console.error(JSON.stringify({ message: "dropping malformed dead letter", id: message.id, issues: parsed.error.issues }));
        message.ack();
        return;
      }
      const task = parsed.data;
      try {
        await schedulerFor(env, task.tenant, task.workflowId).recordDeadLetter(task.stepId, task.attempt);
        message.ack();
      } catch (error) {
        console.error(JSON.stringify({ message: "could not record a dead letter; retrying", workflowId: task.workflowId, error: String(error) }));
        message.retry({ delaySeconds: redeliveryDelaySeconds(message.attempts) });
      }
    }),
  );
}
