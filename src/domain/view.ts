import { z } from "zod";
import { AttemptSchema, StepStateSchema, WorkflowFieldsSchema, type WorkflowState } from "./state";

/** The public shape of `GET /v1/workflows/{id}`: the state minus the scheduler's bookkeeping. */
export const WorkflowViewSchema = WorkflowFieldsSchema.pick({
  id: true,
  name: true,
  status: true,
  input: true,
  output: true,
  error: true,
  createdAt: true,
  updatedAt: true,
  endedAt: true,
}).extend({
  steps: z.array(
    StepStateSchema.omit({ budgetUsed: true, attempts: true }).extend({
      attempts: z.array(AttemptSchema.omit({ lastHeartbeatAt: true, sentAt: true, resends: true, deadLetters: true, queueCheckAt: true })),
    }),
  ),
});

export type WorkflowView = z.infer<typeof WorkflowViewSchema>;

export function toWorkflowView(state: WorkflowState): WorkflowView {
  return {
    id: state.id,
    name: state.name,
    status: state.status,
    input: state.input,
    ...defined({ output: state.output, error: state.error }),
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    ...defined({ endedAt: state.endedAt }),
    steps: state.steps.map((step) => ({
      id: step.id,
      status: step.status,
      attempt: step.attempt,
      ...defined({
        output: step.output,
        error: step.error,
        nextRetryAt: step.nextRetryAt,
        lastHeartbeatAt: step.lastHeartbeatAt,
        progress: step.progress,
      }),
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

function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
