import { targetPolicyFor } from "../config";
import type { ClaimedTask } from "../domain/machine";
import type { AttemptReport, TaskMessage } from "../domain/machine/task-message";
import { schedulerFor } from "../workflow/client";
import { performAction } from "./actions";
import { verifyEarlierEffect, withVerifyCall } from "./verify";
import { guardedByBreaker } from "./breaker-guard";
import { backoffMs } from "../domain/machine/backoff";

/** Heartbeats go out this many times per heartbeat interval, so one lost heartbeat is not a missed deadline. */
const HEARTBEATS_PER_INTERVAL = 3;
const REPORT_TRIES = 3;
/** 50–100 ms, then 100–200 ms: a reset object is back within that. */
const REPORT_RETRY = { initialMs: 75, maxMs: 1_000, jitter: 1 / 3 };
/** How many of the attempts its report schedules an agent takes itself; the rest go through the queue. */
const EAGER_FOLLOW_UPS = 4;

interface FollowUp {
  message: TaskMessage;
  task: ClaimedTask;
}
/**
 * The object's alarm owns every deadline. The agent gives up on its request only a little after the
 * start-to-close deadline, as a backstop that frees the consumer when the supervisor has already acted.
 */
const ABORT_GRACE_MS = 1_000;

/** Performs a claimed attempt and reports; never throws, since the deadlines cover every failure here. */
export async function performTask(message: TaskMessage, task: ClaimedTask, env: Env): Promise<void> {
  const scheduler = schedulerFor(env, message.tenant, message.workflowId);
  const controller = new AbortController();
  const deadline = setTimeout(() => controller.abort("startToCloseMs passed"), Math.max(0, task.deadlineAt + ABORT_GRACE_MS - Date.now()));
  const heartbeats = setInterval(() => {
    scheduler
      .heartbeat(task.stepId, task.attempt)
      .then((reply) => {
        if (!reply.ok || ("cancelRequested" in reply && reply.cancelRequested)) controller.abort("attempt is no longer current");
      })
      .catch(() => undefined);
  }, Math.max(1, Math.floor(task.heartbeatMs / HEARTBEATS_PER_INTERVAL)));
  let report: AttemptReport;
  try {
    const policy = targetPolicyFor(env, message.tenant);
    // The token minted at the claim expires with the attempt; the queue message's own never reaches a remote.
    const token = task.token ?? message.token;
    const perform = async () => {
      const verify = await verifyEarlierEffect(task, token, policy, controller.signal);
      return verify?.verified ?? withVerifyCall(await performAction(task, token, policy, controller.signal), verify);
    };
    // Under the host's breaker: parked with no request while it is open; the outcome counted when it counts.
    report = await guardedByBreaker(env, message.tenant, task, controller.signal, perform);
  } catch (error) {
    // Only a broken setting (ALLOWED_TARGETS) gets here; the attempt fails as retryable until it is fixed.
    report = { type: "failed", error: { message: `agent could not perform the attempt: ${String(error)}`, retryable: true, rule: "default" } };
  } finally {
    clearInterval(heartbeats);
    clearTimeout(deadline);
  }
  const followUps = await reportWithRetry(env, message, report);
  // Eager dispatch: the next attempts come back with the report and run here, without a queue hop.
  await Promise.all(followUps.map((next) => performTask(next.message, next.task, env)));
}

/** A report is idempotent (fenced by attempt), so a reset or overloaded object is simply asked again. */
async function reportWithRetry(env: Env, message: TaskMessage, report: AttemptReport): Promise<FollowUp[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const reply = await schedulerFor(env, message.tenant, message.workflowId).report(message.stepId, message.attempt, report, EAGER_FOLLOW_UPS);
      return "followUps" in reply ? (reply.followUps as FollowUp[]) : [];
    } catch (error) {
      if (attempt >= REPORT_TRIES) {
        // The supervisor still holds the attempt's deadlines: it will time it out and retry.
        console.error(JSON.stringify({ message: "report failed", workflowId: message.workflowId, stepId: message.stepId, error: String(error) }));
        return [];
      }
      await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt - 1, REPORT_RETRY)));
    }
  }
}
