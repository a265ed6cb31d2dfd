import type { ClaimedTask } from "../domain/machine";
import type { AttemptReport } from "../domain/machine/task-message";
import type { TargetPolicy } from "../domain/security/target-policy";
import { performAction } from "./actions";

/**
 * Before an attempt that follows one with no answer, asks the remote whether that earlier effect landed (the
 * step's `verify`, sent with the same Idempotency-Key, GET unless it says otherwise). A 2xx answer (other than
 * 202, which promises nothing) is the step's output: the action is not sent again. Anything else (404, an error,
 * no answer) means "not known to have landed", and the attempt goes on to send the action as usual.
 */
export async function verifyEarlierEffect(task: ClaimedTask, token: string, policy: TargetPolicy, signal: AbortSignal): Promise<AttemptReport | undefined> {
  if (!task.verify) return undefined;
  const check = await performAction({ ...task, action: { ...task.verify, method: task.verify.method ?? "GET" } }, token, policy, signal);
  return check.type === "succeeded" ? { type: "verified", output: check.output, status: check.status ?? 200 } : undefined;
}
