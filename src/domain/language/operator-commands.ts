/**
 * The operator commands' table. contract.ts gives each command its route, its words, the statuses that allow it
 * and whether the object's client may send it again: what the client, the CLI and the dashboard read too. This
 * module gives the rest of its row, for the Worker: its body's schema and the event the machine is given.
 * `COMMAND_RULES` is typed over every name there, so a command added to the contract without its rule here does
 * not compile, nor one without a handler in machine/commands/.
 */
import type { z } from "zod";
import { OPERATOR_COMMANDS, type OperatorCommandContract, type OperatorCommandName, type StepStatus, type WorkflowStatus } from "../contract";
import { ReasonOnlySchema, RedriveSchema, SkipStepSchema } from "./schemas";

/**
 * Who asked for an operator command (or sent an event), and why: the machine records both with what the command
 * did, so the history answers an on-call engineer's first question.
 */
export type ActedBy = {
  /**
   * The API token's name (its tenant's, for a token without one). The service's own commands name what acted
   * on the user's behalf: `schedule:<id>` (an overlap policy's cancel), `workflow:<id>` (a parent closing its
   * child); a token's name has no colon, so the two never meet.
   */
  actor: string;
  reason?: string;
};

interface CommandRule<Body, Event extends { type: string }> {
  /** The schema of its JSON body: the contract's fields, `reason` among them. */
  body: z.ZodType<Body>;
  /** The event it becomes, from its own fields (the reason travels in `by`). */
  event(target: { stepId: string }, body: Body): Event;
}

function rule<Event extends { type: string }, Body extends { reason?: string }>(row: CommandRule<Body, Event>): CommandRule<Body, Event> {
  return row;
}

export const COMMAND_RULES = {
  cancel: rule({ body: ReasonOnlySchema, event: () => ({ type: "CancelRequested" as const }) }),
  compensate: rule({ body: ReasonOnlySchema, event: () => ({ type: "CompensationRequested" as const }) }),
  retryStep: rule({ body: ReasonOnlySchema, event: ({ stepId }) => ({ type: "StepRetryRequested" as const, stepId }) }),
  skipStep: rule({
    body: SkipStepSchema,
    event: ({ stepId }, { output }) => ({ type: "StepSkipRequested" as const, stepId, ...(output === undefined ? {} : { output }) }),
  }),
  pause: rule({ body: ReasonOnlySchema, event: () => ({ type: "PauseRequested" as const }) }),
  resume: rule({ body: ReasonOnlySchema, event: () => ({ type: "ResumeRequested" as const }) }),
  terminate: rule({ body: ReasonOnlySchema, event: () => ({ type: "TerminateRequested" as const }) }),
  redrive: rule({
    body: RedriveSchema,
    event: (_, { fromStep }) => ({ type: "RedriveRequested" as const, ...(fromStep === undefined ? {} : { fromStep }) }),
  }),
} satisfies { [K in OperatorCommandName]: unknown };

type Rules = typeof COMMAND_RULES;

/** The event each command becomes, all of them, with who asked: part of the machine's `WorkflowEvent`. */
export type OperatorEvent = { [K in OperatorCommandName]: ReturnType<Rules[K]["event"]> & { by: ActedBy } }[OperatorCommandName];

/** The body a command's route takes, as its schema parses it (its own fields and `reason`). */
export type CommandBody<K extends OperatorCommandName> = Parameters<Rules[K]["event"]>[1];

type Row<K extends OperatorCommandName> = (typeof OPERATOR_COMMANDS)[K];
type Target<K extends OperatorCommandName> = Row<K>["path"] extends `${string}{stepId}${string}` ? { stepId: string } : object;
/** A command's own fields: the reason is not among them, it travels with who acted (`by`). */
type OwnFields<K extends OperatorCommandName> = Omit<CommandBody<K>, "reason">;
type BodyField<K extends OperatorCommandName> = Row<K> extends { bodyRequired: true } ? { body: OwnFields<K> } : { body?: OwnFields<K> };

/** One command for one workflow, as a caller names it: `{ command: "skipStep", stepId, body: { output } }`. */
export type CommandCall = { [K in OperatorCommandName]: { command: K } & Target<K> & BodyField<K> }[OperatorCommandName];

/** A command as the object's `command()` takes it: the call and who made it. */
export type CommandRequest = CommandCall & { by: ActedBy };

/** What every command answers: done, nothing to do (pausing a paused workflow), or refused and why. */
export type CommandReply = { ok: true; unchanged?: true } | { ok: false; code: "conflict" | "not_found"; message: string };

/** The event a command becomes; a body the command may go without is read as `{}`. */
export function commandEvent(request: CommandRequest): OperatorEvent {
  const row = COMMAND_RULES[request.command] as CommandRule<object, OperatorEvent>;
  const stepId = "stepId" in request ? request.stepId : "";
  const event = row.event({ stepId }, ("body" in request ? request.body : undefined) ?? {});
  return { ...event, by: actedBy(request.by) };
}

/** `by` with only the fields it has, so the history holds no `reason: undefined`. */
export function actedBy({ actor, reason }: ActedBy): ActedBy {
  return reason === undefined ? { actor } : { actor, reason };
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
