import { z } from "zod";
import { findStepPlan, mapItemOf } from "../language/plan";
import { AttemptSchema, CommonStepStateSchema, InboxEventSchema, WorkflowFieldsSchema, type Attempt, type StepState, type WorkflowState } from "./state";
import { kindViewOf, STEP_KIND_NAMES, STEP_VIEW_FIELDS, type StepKindName } from "../language/steps";
import { notifyInView } from "../language/notify";

/** An attempt as the API shows it, in the step's `attempts` and (with what it sent and got back) on its own. */
export const AttemptViewSchema = AttemptSchema.omit({ lastHeartbeatAt: true, sentAt: true, resends: true, deadLetters: true, queueCheckAt: true, progressAt: true });

export type AttemptView = z.infer<typeof AttemptViewSchema>;

export function toAttemptView(attempt: Attempt): AttemptView {
  return {
    n: attempt.n,
    kind: attempt.kind,
    status: attempt.status,
    scheduledAt: attempt.scheduledAt,
    ...defined({ startedAt: attempt.startedAt, endedAt: attempt.endedAt, error: attempt.error }),
  };
}

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
  startAt: true,
}).extend({
  /** The step whose child workflow this is, when one started it. */
  parent: z.object({ id: z.string(), stepId: z.string() }).optional(),
  /** Where its end is POSTed (the start's `notify`): the URL, and whether the notice is signed; never the secret. */
  notify: z.object({ url: z.string(), signed: z.boolean() }).optional(),
  /** How often the workflow was redriven. */
  redriveCount: z.number(),
  /** Events kept in the inbox until a wait for their name starts. */
  pendingEvents: z.array(InboxEventSchema.pick({ event: true, id: true, receivedAt: true })),
  steps: z.array(
    CommonStepStateSchema.omit({ budgetUsed: true, attempts: true, timerAt: true, waitingSince: true, keyRound: true }).extend({
      /** What the step is (from its definition), so a reader can draw it without the definition. */
      kind: z.enum(STEP_KIND_NAMES),
      /** The steps it waits for, defaults applied (absent in the definition = the previous step). */
      dependsOn: z.array(z.string()),
      /** Its kind's own fields (a sleeping step's `sleepingUntil`, a waiting step's `waitingFor`). */
      ...STEP_VIEW_FIELDS,
      attempts: z.array(AttemptViewSchema),
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
    ...defined({ output: state.output && outputsInView(state, state.output), error: state.error }),
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    ...defined({ endedAt: state.endedAt, pausedAt: state.pausedAt, attentionDeadline: state.attentionDeadline, startAt: state.startAt }),
    ...(state.parent ? { parent: { id: state.parent.id, stepId: state.parent.stepId } } : {}),
    ...(state.notify ? { notify: notifyInView(state.notify) } : {}),
    redriveCount: state.redriveCount ?? 0,
    pendingEvents: (state.inbox ?? []).map((entry) => ({ event: entry.event, ...defined({ id: entry.id }), receivedAt: entry.receivedAt })),
    // A map's items in flight are paged apart (GET …/steps/{stepId}/items), never listed here.
    steps: state.steps.filter((step) => !mapItemOf(step.id)).map((step) => ({
      id: step.id,
      ...shapeOfStep(state, step),
      status: step.status,
      attempt: step.attempt,
      ...defined({
        output: step.kind === "map" ? inView(state, step.id, step.output) : step.output,
        error: step.error,
        nextRetryAt: step.nextRetryAt,
        lastHeartbeatAt: step.lastHeartbeatAt,
        progress: step.progress,
        parked: step.parked,
      }),
      ...kindView(state, step),
      attempts: step.attempts.map(toAttemptView),
    })),
  };
}

/** What `GET /v1/workflows/{id}/result` answers once the workflow has ended: its status, output and error, as the view shows them. */
export const WorkflowResultSchema = WorkflowViewSchema.pick({ id: true, status: true, output: true, error: true });

export type WorkflowResult = z.infer<typeof WorkflowResultSchema>;

export function toWorkflowResult(state: WorkflowState): WorkflowResult {
  return { id: state.id, status: state.status, ...defined({ output: state.output && outputsInView(state, state.output), error: state.error }) };
}

/** A step's kind and dependencies, from the plan the workflow runs. */
function shapeOfStep(state: WorkflowState, step: StepState): { kind: StepKindName; dependsOn: string[] } {
  const plan = findStepPlan(state.plan, step.id);
  return { kind: plan?.kind ?? step.kind, dependsOn: plan?.dependsOn ?? [] };
}

/** The fields of the step's kind, in the view's words. */
function kindView(state: WorkflowState, step: StepState): Record<string, unknown> {
  const plan = findStepPlan(state.plan, step.id);
  return plan ? kindViewOf(step, plan) : {};
}

/** Past this, a map's output is not repeated in the answer: its items' page says it, so the answer stays small. */
const MAX_MAP_OUTPUT_IN_VIEW_BYTES = 16 * 1024;

function inView(state: WorkflowState, mapId: string, output: unknown): unknown {
  if (output === undefined || JSON.stringify(output).length <= MAX_MAP_OUTPUT_IN_VIEW_BYTES) return output;
  return { itemsAt: `/v1/workflows/${state.id}/steps/${mapId}/items` };
}

function outputsInView(state: WorkflowState, output: Record<string, unknown>): Record<string, unknown> {
  const maps = state.plan.itemSteps;
  if (!maps) return output;
  return Object.fromEntries(Object.entries(output).map(([id, value]) => [id, maps[id] ? inView(state, id, value) : value]));
}

function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
