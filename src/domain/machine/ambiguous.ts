/** Attempts whose outcome nobody knows: the request may have reached the remote and taken effect, or not. */
import type { Attempt, StepState } from "./state";

/**
 * An action attempt that started and ended without the remote's answer: it timed out (a deadline or a stall) or
 * its request broke off (a retryable failure with no HTTP status). A refused target is not one: it never left.
 */
export function endedWithoutAnswer(attempt: Attempt): boolean {
  return (
    attempt.kind === "action" &&
    attempt.startedAt !== undefined &&
    (attempt.status === "timed_out" || (attempt.status === "failed" && attempt.error?.status === undefined && attempt.error?.retryable !== false))
  );
}

/**
 * Whether the attempt about to run must first ask the remote (`verify`) if the one before it landed: only right
 * after an attempt with no answer. Attempts cancelled without a request (fenced, parked) are passed over.
 */
export function followsAmbiguousAttempt(step: StepState, n: number): boolean {
  const before = step.attempts.filter((attempt) => attempt.n < n && attempt.kind === "action" && attempt.status !== "cancelled").at(-1);
  return before !== undefined && endedWithoutAnswer(before);
}
