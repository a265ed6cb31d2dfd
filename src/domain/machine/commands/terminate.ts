import { actedBy, allowsWorkflow, type ActedBy, type CommandReply } from "../../language/operator-commands";
import type { TransitionContext } from "../context";
import { fenceUnfinishedSteps } from "../saga";
import { conflict } from "./refusal";

/** The operator's "stop now": fence what runs, compensate nothing, end `terminated`. */
export function terminateWorkflow(ctx: TransitionContext, by: ActedBy): CommandReply {
  const { state } = ctx;
  if (!allowsWorkflow("terminate", state.status)) return conflict(`workflow has already ended (${state.status})`);
  fenceUnfinishedSteps(ctx);
  state.status = "terminated";
  state.endedAt = ctx.now;
  state.error = { message: by.reason ?? "terminated by an operator" };
  ctx.record({ type: "workflow_terminated", data: actedBy(by) });
  return { ok: true };
}
