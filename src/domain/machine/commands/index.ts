/**
 * The handlers of the operator commands (domain/operator-commands.ts), one module per kind of command: what each
 * command does to the workflow, and when it refuses. A command's event comes here and nowhere else; each handler
 * records who acted and why (`by`) on the history entry that says what it did.
 */
import type { CommandReply, OperatorEvent } from "../../language/operator-commands";
import type { TransitionContext } from "../context";
import { retryStep, skipStep } from "./failed-step";
import { pauseWorkflow, resumeWorkflow } from "./pause";
import { redriveWorkflow } from "./redrive";
import { terminateWorkflow } from "./terminate";
import { cancelWorkflow, compensateWorkflow } from "./unwind";

type Handlers = { [T in OperatorEvent["type"]]: (ctx: TransitionContext, event: Extract<OperatorEvent, { type: T }>) => CommandReply };

const HANDLERS: Handlers = {
  CancelRequested: (ctx, { by }) => cancelWorkflow(ctx, by),
  CompensationRequested: (ctx, { by }) => compensateWorkflow(ctx, by),
  StepRetryRequested: (ctx, event) => retryStep(ctx, event.stepId, event.by),
  StepSkipRequested: (ctx, event) => skipStep(ctx, event.stepId, "output" in event ? event.output : undefined, event.by),
  PauseRequested: (ctx, { by }) => pauseWorkflow(ctx, by),
  ResumeRequested: (ctx, { by }) => resumeWorkflow(ctx, by),
  TerminateRequested: (ctx, { by }) => terminateWorkflow(ctx, by),
  RedriveRequested: (ctx, event) => redriveWorkflow(ctx, "fromStep" in event ? event.fromStep : undefined, event.by),
};

export function applyCommand(ctx: TransitionContext, event: OperatorEvent): CommandReply {
  const handler = HANDLERS[event.type] as (ctx: TransitionContext, event: OperatorEvent) => CommandReply;
  return handler(ctx, event);
}
