import type { Exchange } from "../domain/exchange/exchange";
import type { ClaimedTask } from "../domain/machine";
import type { AttemptReport } from "../domain/machine/task-message";
import type { TargetPolicy } from "../domain/security/target-policy";
import { performAction } from "./actions";

/** What the step's `verify` said: the step's report when it found the effect, and the call either way. */
export interface VerifyAnswer {
  verified?: AttemptReport;
  exchange?: Exchange;
}

/**
 * Before an attempt that follows one with no answer, asks the remote whether that earlier effect landed (the
 * step's `verify`, sent with the same Idempotency-Key, GET unless it says otherwise). A 2xx answer (other than
 * 202, which promises nothing) is the step's output: the action is not sent again. Anything else (404, an error,
 * no answer) means "not known to have landed", and the attempt goes on to send the action as usual. Undefined when
 * the attempt has no `verify` to ask.
 */
export async function verifyEarlierEffect(task: ClaimedTask, token: string, policy: TargetPolicy, signal: AbortSignal): Promise<VerifyAnswer | undefined> {
  if (!task.verify) return undefined;
  const check = await performAction({ ...task, action: { ...task.verify, method: task.verify.method ?? "GET" } }, token, policy, signal);
  const exchange: Exchange | undefined = check.exchange?.request && { request: check.exchange.request, ...(check.exchange.response ? { response: check.exchange.response } : {}) };
  if (check.type !== "succeeded") return exchange ? { exchange } : {};
  const verified: AttemptReport = { type: "verified", output: check.output, status: check.status ?? 200, ...(exchange ? { exchange: { verify: exchange } } : {}) };
  return { verified, ...(exchange ? { exchange } : {}) };
}

/** The attempt's report with the `verify` call it asked first, so both show on the attempt. */
export function withVerifyCall(report: AttemptReport, answer: VerifyAnswer | undefined): AttemptReport {
  if (!answer?.exchange) return report;
  return { ...report, exchange: { ...report.exchange, verify: answer.exchange } };
}
