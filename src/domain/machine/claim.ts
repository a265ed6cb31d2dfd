import type { Action, HttpAction } from "../language/schemas";
import { breakerHostOf, DEFAULT_BREAKER } from "../breaker/settings";
import { renderTemplates, TemplateError } from "../language/templates";
import type { TransitionContext } from "./context";
import { afterStepChange } from "./dispatch";
import { failAttempt } from "./failure";
import { locateAttempt, type ReportRejection } from "./fencing";
import { followsAmbiguousAttempt } from "./ambiguous";
import type { ClaimedTask } from "./claimed-task";
import type { RetryPolicy } from "../language/retry-policy";
import type { StatusRules } from "./remote-outcome";
import { mapItemOf } from "../language/plan";

export type { ClaimedTask } from "./claimed-task";

export function claimAttempt(
  ctx: TransitionContext,
  stepId: string,
  n: number,
  pool?: string,
): { ok: true; task: ClaimedTask } | ReportRejection | { ok: false; code: "render_failed"; message: string } {
  const located = locateAttempt(ctx, stepId, n, "claim");
  if (!located.ok) return located;
  const { step, attempt } = located;
  if (attempt.status !== "scheduled") {
    return { ok: false, code: "already_claimed", message: `attempt ${n} of step "${stepId}" was already claimed` };
  }
  // A worker task is claimed only through the pool it waits in now: the pool it left, or an agent, gets nothing.
  if (attempt.pool !== pool) {
    return { ok: false, code: "reassigned", message: `attempt ${n} of step "${stepId}" waits in ${attempt.pool === undefined ? "the queue" : `pool ${attempt.pool}`}, not ${pool === undefined ? "the queue" : `pool ${pool}`}` };
  }
  const plan = ctx.plan(stepId);
  attempt.status = "running";
  attempt.startedAt = ctx.now;
  attempt.lastHeartbeatAt = ctx.now;
  step.lastHeartbeatAt = ctx.now;
  if (attempt.kind === "action") step.status = "running";
  ctx.record({ type: "step_started", stepId, attempt: n, data: { kind: attempt.kind } });

  let action: Action;
  let verify: HttpAction | undefined;
  try {
    const context = ctx.templateContext(stepId);
    // Only an action step has attempts of its own; a step of any kind may have a compensation.
    const own = plan.kind === "action" ? plan : undefined;
    action = renderTemplates(attempt.kind === "action" ? own?.action : plan.compensate, context) as Action;
    if (attempt.kind === "action" && own?.verify && followsAmbiguousAttempt(step, n)) verify = renderTemplates(own.verify, context) as HttpAction;
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    failAttempt(ctx, step, attempt, { message: error.message, retryable: false });
    afterStepChange(ctx);
    return { ok: false, code: "render_failed", message: error.message };
  }
  const suffix = attempt.kind === "compensation" ? ":compensate" : "";
  return {
    ok: true,
    task: {
      workflowId: ctx.state.id,
      stepId,
      attempt: n,
      kind: attempt.kind,
      action,
      idempotencyKey: `${idempotencyBase(ctx, stepId)}${suffix}`,
      deadlineAt: ctx.now + plan.timeouts.startToCloseMs,
      startToCloseMs: plan.timeouts.startToCloseMs,
      heartbeatMs: plan.timeouts.heartbeatMs,
      ...(step.progress === undefined ? {} : { progress: step.progress }),
      ...(verify ? { verify } : {}),
      ...(action.type === "http" ? hostOf(action.url) : {}),
      breaker: plan.breaker ?? DEFAULT_BREAKER,
      ...(attempt.afterParking ? { afterParking: true as const } : {}),
      ...(action.type === "http" ? statusRulesOf(plan.retry) : {}),
    },
  };
}

/**
 * `<workflowId>:<stepId>`, or `<workflowId>:<mapStepId>:<index>` for a map's item. A step (or item) re-run on
 * purpose by a redrive (see `keyRound`) asks the remote for new work under a new key.
 */
function idempotencyBase(ctx: TransitionContext, stepId: string): string {
  const item = mapItemOf(stepId);
  const keyRound = ctx.step(stepId)?.keyRound ?? (item && ctx.step(item.map)?.keyRound);
  const round = keyRound === undefined ? "" : `:redrive-${keyRound}`;
  return `${ctx.state.id}:${item ? `${item.map}:${item.index}` : stepId}${round}`;
}

function statusRulesOf({ retryableStatuses, nonRetryableStatuses }: RetryPolicy): { statusRules?: StatusRules } {
  if (retryableStatuses === undefined && nonRetryableStatuses === undefined) return {};
  return { statusRules: { ...(retryableStatuses ? { retryableStatuses } : {}), ...(nonRetryableStatuses ? { nonRetryableStatuses } : {}) } };
}

function hostOf(url: string): { host?: string } {
  const host = breakerHostOf(url);
  return host === undefined ? {} : { host };
}
