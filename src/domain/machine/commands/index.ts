/**
 * The handlers of the operator commands (domain/operator-commands.ts), one module per kind of command: what each
 * command does to the workflow, and when it refuses. A command's event comes here and nowhere else.
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
  CancelRequested: (ctx) => cancelWorkflow(ctx),
  CompensationRequested: (ctx) => compensateWorkflow(ctx),
  StepRetryRequested: (ctx, event) => retryStep(ctx, event.stepId),
  StepSkipRequested: (ctx, event) => skipStep(ctx, event.stepId, "output" in event ? event.output : undefined),
  PauseRequested: (ctx) => pauseWorkflow(ctx),
  ResumeRequested: (ctx) => resumeWorkflow(ctx),
  TerminateRequested: (ctx, event) => terminateWorkflow(ctx, "reason" in event ? event.reason : undefined),
  RedriveRequested: (ctx, event) => redriveWorkflow(ctx, "fromStep" in event ? event.fromStep : undefined),
};

export function applyCommand(ctx: TransitionContext, event: OperatorEvent): CommandReply {
  const handler = HANDLERS[event.type] as (ctx: TransitionContext, event: OperatorEvent) => CommandReply;
  return handler(ctx, event);
}
