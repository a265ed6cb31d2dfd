/**
 * The consumer of `shepherd-starts-dlq`: what the queue gave up on all the same (every delivery failed: the consumer
 * crashed on it, or a deferred message could not be sent again in time) is recorded as a dead letter too, then acked.
 */
import type { DeadLetterError } from "./dead-letter";
import { recordDeadLetter } from "./dead-letters-db";
import { readStartMessage } from "./start-message";
import { delayAfterFailureSeconds } from "./start-verdict";
import { knownTenants } from "./tenants";

const GIVEN_UP: DeadLetterError = {
  code: "retries_exhausted",
  message: "The queue gave up on this message: every delivery of it failed. Nothing was started from it; send it again once the cause is fixed.",
};

export async function recordGivenUpStarts(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        const known = knownTenants(env);
        if (!known.ok) throw new Error(`${known.problem}; fix the API_TOKENS secret`);
        const read = await readStartMessage(message.body, message.id, known.tenants);
        // A message that cannot start says why; one that could have is kept as given up.
        const error = read.ok ? GIVEN_UP : read.error;
        await recordDeadLetter(env.DB, { tenant: read.tenant, messageId: message.id, body: message.body, error, attempts: message.attempts, at: Date.now() });
        message.ack();
      } catch (error) {
        console.error(JSON.stringify({ message: "could not record a start the queue gave up on; retrying", id: message.id, error: String(error) }));
        // This queue has no dead-letter queue of its own: it keeps trying, as long apart as a deferred start.
        message.retry({ delaySeconds: delayAfterFailureSeconds(message.attempts) });
      }
    }),
  );
}
