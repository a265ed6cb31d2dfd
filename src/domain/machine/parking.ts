/**
 * Parking: an attempt due for a host whose circuit breaker is open is set aside before any request is made,
 * without using up an attempt, until the breaker closes and releases the step. The breaker (one per host and
 * tenant) decides; this is what a workflow does with its answers.
 */
import { activeAttempt, isTerminal, type StepState } from "./state";
import type { CircuitOpened } from "./task-message";
import type { TransitionContext } from "./context";
import { retryWhenDue } from "./deadlines";
import { locateAttempt, type ReportRejection } from "./fencing";

/**
 * How long after its breaker's `openUntil` a parked step retries by itself. The breaker's release is one RPC
 * that can be lost (an object reset, a breaker that never hears of a probe); this bounds what that costs.
 */
export const PARKED_BACKSTOP_MS = 300_000;

/**
 * The agent found the breaker of the attempt's host open and made no request. The attempt ends (cancelled,
 * retryable) and its budget is given back; the step waits in `retrying` (a compensation stays `compensating`)
 * until the breaker releases it, or until the backstop. While paused, the same: the backstop is held like any
 * retry, and a release while paused leaves the retry due for the resume.
 */
export function parkAttempt(ctx: TransitionContext, stepId: string, n: number, host: string, openUntil: number): { ok: true } | ReportRejection {
  const located = locateAttempt(ctx, stepId, n, "parked");
  if (!located.ok) return located;
  const { step, attempt } = located;
  attempt.status = "cancelled";
  attempt.endedAt = ctx.now;
  attempt.error = { message: `circuit open for ${host}`, retryable: true };
  // Nothing was sent, so this attempt cannot have taken effect: compensation and verify must not count it.
  delete attempt.startedAt;
  delete attempt.lastHeartbeatAt;
  step.budgetUsed = Math.max(0, step.budgetUsed - 1);
  step.parked = { host, since: step.parked?.host === host ? step.parked.since : ctx.now, openUntil };
  step.nextRetryAt = Math.max(openUntil, ctx.now) + PARKED_BACKSTOP_MS;
  if (attempt.kind === "action") step.status = "retrying";
  ctx.record({ type: "step_parked", stepId, attempt: n, data: { host, kind: attempt.kind, openUntil } });
  return { ok: true };
}

/**
 * The breaker of `host` closed (or lets this step through as its probe): a step still parked on it runs its next
 * attempt now. Anything else (released already, by the backstop, or no longer waiting) is left as it is, so a
 * repeated or late release is harmless.
 */
export function releaseParkedStep(
  ctx: TransitionContext,
  stepId: string,
  host: string,
): { ok: true; released: boolean } | { ok: false; code: "not_found"; message: string } {
  const step = ctx.step(stepId);
  if (!step) return { ok: false, code: "not_found", message: `workflow has no step "${stepId}"` };
  if (!isWaitingOn(ctx, step, host)) return { ok: true, released: false };
  const parkedMs = ctx.now - (step.parked?.since ?? ctx.now);
  ctx.record({ type: "circuit_closed", stepId, data: { host, parkedMs } });
  if (ctx.state.status === "paused") {
    // A pause starts nothing: the retry is due at once, and the resume starts it.
    delete step.parked;
    step.nextRetryAt = ctx.now;
    return { ok: true, released: true };
  }
  retryWhenDue(ctx, step);
  return { ok: true, released: true };
}

function isWaitingOn(ctx: TransitionContext, step: StepState, host: string): boolean {
  if (step.parked?.host !== host || activeAttempt(step) || isTerminal(ctx.state.status)) return false;
  return step.status === "retrying" || step.status === "compensating";
}

/**
 * The failure being reported opened its host's breaker: the workflow whose attempt tipped it over says so in its
 * history, before the failure itself. Only for the step's current attempt: a stale report changes nothing.
 */
export function noteCircuitOpened(ctx: TransitionContext, stepId: string, n: number, opened: CircuitOpened | undefined): void {
  if (!opened) return;
  const step = ctx.step(stepId);
  if (!step || activeAttempt(step)?.n !== n) return;
  ctx.record({ type: "circuit_opened", stepId, attempt: n, data: { host: opened.host, failures: opened.failures, openUntil: opened.openUntil } });
}
