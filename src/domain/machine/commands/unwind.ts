/** The commands that unwind a workflow: cancel it, or give up on one that waits on an operator. */
import { actedBy, allowsWorkflow, type ActedBy, type CommandReply } from "../../language/operator-commands";
import { isTerminal } from "../state";
import type { TransitionContext } from "../context";
import { beginCompensation } from "../saga";
import { cancelBeforeStart } from "../scheduled-start";
import { conflict } from "./refusal";

/**
 * Cancel fences running attempts, compensates what succeeded, then ends `cancelled`; a scheduled workflow, which
 * ran nothing, ends at once. Repeating it is harmless.
 */
export function cancelWorkflow(ctx: TransitionContext, by: ActedBy): CommandReply {
  const { state } = ctx;
  if (isTerminal(state.status)) return conflict(`workflow has already ended (${state.status})`);
  if (state.compensation?.endStatus === "cancelled") return { ok: true };
  if (state.compensation) return conflict("workflow is already compensating after a failure");
  ctx.record({ type: "operator_action", data: { action: "cancel", ...actedBy(by) } });
  if (state.status === "scheduled") cancelBeforeStart(ctx);
  else beginCompensation(ctx, "cancelled");
  return { ok: true };
}

/** Gives up on a workflow that waits on an operator: unwind it (or carry on unwinding it). */
export function compensateWorkflow(ctx: TransitionContext, by: ActedBy): CommandReply {
  const { state } = ctx;
  if (!allowsWorkflow("compensate", state.status)) {
    return conflict(`operator actions need a workflow in needs_attention (it is ${state.status})`);
  }
  ctx.record({ type: "operator_action", data: { action: "compensate", ...actedBy(by) } });
  giveUp(ctx, "compensated by an operator");
  return { ok: true };
}

/** Unwinds a workflow that waits on people (or carries on unwinding it), for an operator or an expired escalation. */
export function giveUp(ctx: TransitionContext, reason: string): void {
  const { state } = ctx;
  const head = state.compensation && ctx.step(state.compensation.queue[0] ?? "");
  if (head) {
    state.status = "compensating";
    head.budgetUsed = 0;
    ctx.scheduleAttempt(head, "compensation");
    return;
  }
  state.error ??= { message: reason };
  beginCompensation(ctx, "compensated");
}
