import { faultFires, InjectedFault } from "../dev/faults";
import type { ClaimedTask } from "../domain/machine";
import { TaskMessageSchema, type TaskMessage } from "../domain/task-message";
import { schedulerFor } from "../scheduler/stub";
import { agentHostFor } from "./agent-host";
import { performTask } from "./perform-task";

/**
 * The agents' front: the queue consumer claims each attempt from its workflow's object and hands it to an
 * agent host, which performs it, heartbeats and reports. The claim is the hand-off point: from then on the
 * object's deadlines own the attempt, so the message is acknowledged at once and no remote call holds the
 * batch. (A consumer runs one batch at a time locally, and a batch's invocation stays open until all of its
 * work, `waitUntil` included, is done: a slow remote would hold up everyone queued behind it.)
 */
export async function consumeTaskBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
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
      // An agent crash that takes the whole batch down: what was not acked yet is delivered again.
      if (faultFires(env, "consumerThrows")) throw new InjectedFault("consumerThrows");
      let task: ClaimedTask | undefined;
      try {
        task = await claimTask(parsed.data, env);
      } catch (error) {
        // The object could not be reached (reset, overloaded): deliver again later; after max_retries the
        // message goes to the dead-letter queue, whose consumer records it and fails the attempt.
        console.error(JSON.stringify({ message: "claim failed; retrying delivery", id: message.id, error: String(error) }));
        message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
        return;
      }
      message.ack();
      if (task) await handOff(parsed.data, task, env);
    }),
  );
  const crash = outcomes.find((outcome) => outcome.status === "rejected");
  if (crash) throw crash.reason;
}

/** The claim refuses a redelivered or stale message before anything reaches the remote: undefined then. */
async function claimTask(message: TaskMessage, env: Env): Promise<ClaimedTask | undefined> {
  const claim = await schedulerFor(env, message.tenant, message.workflowId).claim(message.stepId, message.attempt);
  if (!claim.ok || !("task" in claim)) return undefined;
  // The agent dies silently: no request, no heartbeat, no report; only the supervisor can notice.
  if (faultFires(env, "agentDiesAfterClaim")) return undefined;
  return claim.task as ClaimedTask;
}

/** If no agent host takes the attempt, the consumer performs it itself rather than leave it to time out. */
async function handOff(message: TaskMessage, task: ClaimedTask, env: Env): Promise<void> {
  try {
    await agentHostFor(env, message).perform(message, task);
  } catch (error) {
    console.error(JSON.stringify({ message: "agent host unavailable; performing in the consumer", workflowId: message.workflowId, error: String(error) }));
    await performTask(message, task, env);
  }
}
