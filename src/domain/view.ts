import { z } from "zod";
import { findStepPlan, stepKind } from "./plan";
import { STEP_KINDS, type StepKind } from "./schemas";
import { AttemptSchema, InboxEventSchema, StepStateSchema, WorkflowFieldsSchema, type StepState, type WorkflowState } from "./state";

/** The public shape of `GET /v1/workflows/{id}`: the state minus the scheduler's bookkeeping. */
export const WorkflowViewSchema = WorkflowFieldsSchema.pick({
  id: true,
  name: true,
  definition: true,
  status: true,
  input: true,
  output: true,
  error: true,
  createdAt: true,
  updatedAt: true,
  endedAt: true,
  pausedAt: true,
  attentionDeadline: true,
}).extend({
  /** How often the workflow was redriven. */
  redriveCount: z.number(),
  /** Events kept in the inbox until a wait for their name starts. */
  pendingEvents: z.array(InboxEventSchema.pick({ event: true, id: true, receivedAt: true })),
  steps: z.array(
    StepStateSchema.omit({ budgetUsed: true, attempts: true, timerAt: true, waitingSince: true, keyRound: true }).extend({
      /** What the step is (from its definition), so a reader can draw it without the definition. */
      kind: z.enum(STEP_KINDS),
      /** The steps it waits for, defaults applied (absent in the definition = the previous step). */
      dependsOn: z.array(z.string()),
      /** A sleeping step wakes then. */
      sleepingUntil: z.number().optional(),
      /** A step waiting for an event: which, and when it gives up. */
      waitingFor: z.object({ event: z.string(), timeoutAt: z.number() }).optional(),
      attempts: z.array(AttemptSchema.omit({ lastHeartbeatAt: true, sentAt: true, resends: true, deadLetters: true, queueCheckAt: true, progressAt: true })),
    }),
  ),
});

export type WorkflowView = z.infer<typeof WorkflowViewSchema>;

export function toWorkflowView(state: WorkflowState): WorkflowView {
  return {
    id: state.id,
    name: state.name,
    ...defined({ definition: state.definition }),
    status: state.status,
    input: state.input,
    ...defined({ output: state.output, error: state.error }),
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    ...defined({ endedAt: state.endedAt, pausedAt: state.pausedAt, attentionDeadline: state.attentionDeadline }),
    redriveCount: state.redriveCount ?? 0,
    pendingEvents: (state.inbox ?? []).map((entry) => ({ event: entry.event, ...defined({ id: entry.id }), receivedAt: entry.receivedAt })),
    steps: state.steps.map((step) => ({
      id: step.id,
      ...shapeOfStep(state, step),
      status: step.status,
      attempt: step.attempt,
      ...defined({
        output: step.output,
        error: step.error,
        nextRetryAt: step.nextRetryAt,
        lastHeartbeatAt: step.lastHeartbeatAt,
        progress: step.progress,
        parked: step.parked,
      }),
      ...timerView(state, step),
      attempts: step.attempts.map((attempt) => ({
        n: attempt.n,
        kind: attempt.kind,
        status: attempt.status,
        scheduledAt: attempt.scheduledAt,
        ...defined({ startedAt: attempt.startedAt, endedAt: attempt.endedAt, error: attempt.error }),
      })),
    })),
  };
}

/** A step's kind and dependencies, from the plan the workflow runs. */
function shapeOfStep(state: WorkflowState, step: StepState): { kind: StepKind; dependsOn: string[] } {
  const plan = findStepPlan(state.plan, step.id);
  return { kind: plan ? stepKind(plan) : "action", dependsOn: plan?.dependsOn ?? [] };
}

/** What a sleeping or waiting step's timer means, in the view's words. */
function timerView(state: WorkflowState, step: StepState): { sleepingUntil?: number; waitingFor?: { event: string; timeoutAt: number } } {
  if (step.timerAt === undefined) return {};
  if (step.status === "sleeping") return { sleepingUntil: step.timerAt };
  const event = findStepPlan(state.plan, step.id)?.waitForEvent?.event;
  return step.status === "waiting" && event !== undefined ? { waitingFor: { event, timeoutAt: step.timerAt } } : {};
}

function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
