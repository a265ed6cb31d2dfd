import { targetPolicyFor } from "../config";
import { faultFires, InjectedFault } from "../dev/faults";
import { TaskMessageSchema, type AttemptReport, type TaskMessage } from "../domain/task-message";
import type { ClaimedTask } from "../domain/machine";
import { schedulerFor } from "../scheduler/stub";
import { performHttpAction } from "./http-action";

/** Heartbeats go out this many times per heartbeat interval, so one lost heartbeat is not a missed deadline. */
const HEARTBEATS_PER_INTERVAL = 3;
const REPORT_TRIES = 3;
/**
 * The object's alarm owns every deadline. The agent gives up on its request only a little after the
 * start-to-close deadline, as a backstop that frees the consumer when the supervisor has already acted.
 */
const ABORT_GRACE_MS = 1_000;

/**
 * The agent: claims each attempt from its workflow's object, performs it, heartbeats while it waits and
 * reports back. Messages of a batch run side by side so one slow remote does not hold up the others.
 */
export async function consumeTaskBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(
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
      try {
        await runTask(parsed.data, env);
        message.ack();
      } catch (error) {
        // The object could not be reached (reset, overloaded): deliver again later; after max_retries the
        // message goes to the dead-letter queue and the attempt's deadlines still bring it back.
        console.error(JSON.stringify({ message: "task failed; retrying delivery", id: message.id, error: String(error) }));
        message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
      }
    }),
  );
}

async function runTask(message: TaskMessage, env: Env): Promise<void> {
  const scheduler = schedulerFor(env, message.tenant, message.workflowId);
  // A redelivered or stale message is refused here, before anything reaches the remote.
  const claim = await scheduler.claim(message.stepId, message.attempt);
  if (!claim.ok || !("task" in claim)) return;
  const task = claim.task as ClaimedTask;
  // The agent dies silently: no request, no heartbeat, no report; only the supervisor can notice.
  if (faultFires(env, "agentDiesAfterClaim")) return;

  const controller = new AbortController();
  const deadline = setTimeout(() => controller.abort("startToCloseMs passed"), Math.max(0, task.deadlineAt + ABORT_GRACE_MS - Date.now()));
  const silent = faultFires(env, "dropHeartbeats");
  const heartbeats = setInterval(() => {
    if (silent) return;
    scheduler
      .heartbeat(task.stepId, task.attempt)
      .then((reply) => {
        if (!reply.ok || ("cancelRequested" in reply && reply.cancelRequested)) controller.abort("attempt is no longer current");
      })
      .catch(() => undefined);
  }, Math.max(1, Math.floor(task.heartbeatMs / HEARTBEATS_PER_INTERVAL)));
  let report: AttemptReport;
  try {
    report = await performHttpAction(task, message.token, targetPolicyFor(env, message.tenant), controller.signal);
  } finally {
    clearInterval(heartbeats);
    clearTimeout(deadline);
  }
  await reportWithRetry(env, message, report);
}

/** A report is idempotent (fenced by attempt), so a reset or overloaded object is simply asked again. */
async function reportWithRetry(env: Env, message: TaskMessage, report: AttemptReport): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await schedulerFor(env, message.tenant, message.workflowId).report(message.stepId, message.attempt, report);
      return;
    } catch (error) {
      if (attempt >= REPORT_TRIES) {
        // The supervisor still holds the attempt's deadlines: it will time it out and retry.
        console.error(JSON.stringify({ message: "report failed", workflowId: message.workflowId, stepId: message.stepId, error: String(error) }));
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt * (1 + Math.random())));
    }
  }
}
