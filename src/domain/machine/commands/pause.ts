/**
 * Pause and resume. Pause is a state of the supervisor, not a flag it polls: while `paused`, `nextDeadlineAt`
 * leaves out the timers that would start or finish work and dispatch starts nothing, so nothing wakes for them;
 * resume runs the supervisor's tick at once, which finds them due.
 */
import { actedBy, allowsWorkflow, type ActedBy, type CommandReply } from "../../language/operator-commands";
import { isTerminal } from "../state";
import type { TransitionContext } from "../context";
import { superviseDeadlines } from "../deadlines";
import { failedForGood } from "../failure";
import { deliverInbox } from "../steps";
import { conflict } from "./refusal";
import { mapItemOf } from "../../language/plan";

/** Only a running workflow pauses: one that unwinds or waits on an operator is already not moving forward. */
export function pauseWorkflow(ctx: TransitionContext, by: ActedBy): CommandReply {
  const { state } = ctx;
  if (state.status === "paused") return { ok: true, unchanged: true };
  if (isTerminal(state.status)) return conflict(`workflow has already ended (${state.status})`);
  // Holding a start would only move its time: a later start is a cancel and a new start, said in so many words.
  if (state.status === "scheduled") return conflict("a scheduled workflow has not started, so nothing runs to pause: cancel or terminate it, or pause it once it runs");
  if (!allowsWorkflow("pause", state.status)) return conflict(`only a running workflow can be paused (it is ${state.status})`);
  state.status = "paused";
  state.pausedAt = ctx.now;
  ctx.record({ type: "workflow_paused", data: actedBy(by) });
  return { ok: true };
}

/** Back to running; what fell due while paused happens now, in the order a running workflow would have seen it. */
export function resumeWorkflow(ctx: TransitionContext, by: ActedBy): CommandReply {
  const { state } = ctx;
  if (!allowsWorkflow("resume", state.status)) return conflict(`only a paused workflow can be resumed (it is ${state.status})`);
  state.status = "running";
  ctx.record({ type: "workflow_resumed", data: { pausedMs: ctx.now - (state.pausedAt ?? ctx.now), ...actedBy(by) } });
  delete state.pausedAt;
  // Events sent while paused were kept: they reach their waits before any wait's timeout is looked at.
  deliverInbox(ctx);
  // A step that failed for good while paused waited for this: its workflow's onFailure applies now.
  // (A map's failed item is its map's to count, on the tick below.)
  const held = state.steps.find((step) => step.status === "failed" && !mapItemOf(step.id));
  if (held) failedForGood(ctx, held, held.error ?? { message: "failed while paused" });
  superviseDeadlines(ctx);
  return { ok: true };
}
