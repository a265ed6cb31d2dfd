/**
 * The operator commands' table. contract.ts gives each command its route, its words, the statuses that allow it
 * and whether the object's client may send it again: what the client, the CLI and the dashboard read too. This
 * module gives the rest of its row, for the Worker: its body's schema and the event the machine is given.
 * `COMMAND_RULES` is typed over every name there, so a command added to the contract without its rule here does
 * not compile, nor one without a handler in machine/commands/.
 */
import type { z } from "zod";
import { OPERATOR_COMMANDS, type OperatorCommandContract, type OperatorCommandName, type StepStatus, type WorkflowStatus } from "../contract";
import { RedriveSchema, SkipStepSchema, TerminateSchema } from "./schemas";

interface CommandRule<Body, Event extends { type: string }> {
  /** The schema of its JSON body, when the contract gives it fields. */
  body?: z.ZodType<Body>;
  event(target: { stepId: string }, body: Body): Event;
}

function rule<Event extends { type: string }, Body = Record<string, never>>(row: CommandRule<Body, Event>): CommandRule<Body, Event> {
  return row;
}

export const COMMAND_RULES = {
  cancel: rule({ event: () => ({ type: "CancelRequested" as const }) }),
  compensate: rule({ event: () => ({ type: "CompensationRequested" as const }) }),
  retryStep: rule({ event: ({ stepId }) => ({ type: "StepRetryRequested" as const, stepId }) }),
  skipStep: rule({
    body: SkipStepSchema,
    event: ({ stepId }, { output }) => ({ type: "StepSkipRequested" as const, stepId, ...(output === undefined ? {} : { output }) }),
  }),
  pause: rule({ event: () => ({ type: "PauseRequested" as const }) }),
  resume: rule({ event: () => ({ type: "ResumeRequested" as const }) }),
  terminate: rule({
    body: TerminateSchema,
    event: (_, { reason }) => ({ type: "TerminateRequested" as const, ...(reason === undefined ? {} : { reason }) }),
  }),
  redrive: rule({
    body: RedriveSchema,
    event: (_, { fromStep }) => ({ type: "RedriveRequested" as const, ...(fromStep === undefined ? {} : { fromStep }) }),
  }),
} satisfies { [K in OperatorCommandName]: unknown };

type Rules = typeof COMMAND_RULES;

/** The event each command becomes, all of them: part of the machine's `WorkflowEvent`. */
export type OperatorEvent = { [K in OperatorCommandName]: ReturnType<Rules[K]["event"]> }[OperatorCommandName];

/** The body a command takes, as its schema parses it. */
export type CommandBody<K extends OperatorCommandName> = Parameters<Rules[K]["event"]>[1];

type Row<K extends OperatorCommandName> = (typeof OPERATOR_COMMANDS)[K];
type Target<K extends OperatorCommandName> = Row<K>["path"] extends `${string}{stepId}${string}` ? { stepId: string } : object;
type BodyField<K extends OperatorCommandName> = Row<K> extends { bodyRequired: true } ? { body: CommandBody<K> } : Row<K> extends { fields: object } ? { body?: CommandBody<K> } : object;

/** One command for one workflow, as the object's `command()` takes it: `{ command: "skipStep", stepId, body }`. */
export type CommandRequest = { [K in OperatorCommandName]: { command: K } & Target<K> & BodyField<K> }[OperatorCommandName];

/** What every command answers: done, nothing to do (pausing a paused workflow), or refused and why. */
export type CommandReply = { ok: true; unchanged?: true } | { ok: false; code: "conflict" | "not_found"; message: string };

/** The event a command becomes; a body the command may go without is read as `{}`. */
export function commandEvent(request: CommandRequest): OperatorEvent {
  const row = COMMAND_RULES[request.command] as CommandRule<object, OperatorEvent>;
  const stepId = "stepId" in request ? request.stepId : "";
  return row.event({ stepId }, ("body" in request ? request.body : undefined) ?? {});
}

/** Whether the table lets a command act on a workflow in this status. */
export function allowsWorkflow(command: OperatorCommandName, status: WorkflowStatus): boolean {
  const allowed: readonly WorkflowStatus[] = OPERATOR_COMMANDS[command].workflowStatuses;
  return allowed.includes(status);
}

/** Whether the table lets a step command act on a step in this status. */
export function allowsStep(command: OperatorCommandName, status: StepStatus): boolean {
  const row: OperatorCommandContract = OPERATOR_COMMANDS[command];
  return row.stepStatuses?.includes(status) ?? false;
}
