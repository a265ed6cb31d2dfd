import type { AttemptKind, AttemptStatus, StepError, StepStatus, WorkflowState, WorkflowStatus } from "./state";

/** The public shape of `GET /v1/workflows/{id}`: the state minus the scheduler's bookkeeping. */
export interface WorkflowView {
  id: string;
  name: string;
  status: WorkflowStatus;
  input: unknown;
  output?: Record<string, unknown>;
  error?: StepError;
  createdAt: number;
  updatedAt: number;
  endedAt?: number;
  steps: StepView[];
}

export interface StepView {
  id: string;
  status: StepStatus;
  attempt: number;
  output?: unknown;
  error?: StepError;
  nextRetryAt?: number;
  lastHeartbeatAt?: number;
  progress?: unknown;
  attempts: {
    n: number;
    kind: AttemptKind;
    status: AttemptStatus;
    scheduledAt: number;
    startedAt?: number;
    endedAt?: number;
    error?: StepError;
  }[];
}

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
