// Shepherd's answers as the cases read them: the workflow view, the history and the dev-only counters come
// in as JSON, and only the fields the figures use are taken out, each checked for its type.
import { field, isRecord, numberField, stringField } from "../../../scripts/lib/json.ts";
import type { AttemptView, DevInfo, DispatchInfo, HistoryEvent, PollAnswer, PoolTask, StepView, WorkflowStatus } from "./engine.ts";

const TERMINAL = new Set(["completed", "failed", "compensated", "cancelled", "needs_attention"]);

/** GET /v1/workflows/{id}: the status with the engine's own completion stamp; a 404 is not terminal. */
export function workflowStatus(status: number, body: unknown, text: string): WorkflowStatus {
  if (status !== 200) return { state: `http_${status}`, terminal: status === 404 ? false : true, completed: false, error: text.slice(0, 300) };
  const state = String(field(body, "status"));
  return {
    state,
    terminal: TERMINAL.has(state),
    completed: state === "completed",
    endedAt: numberField(body, "endedAt"),
    steps: stepViews(field(body, "steps")),
  };
}

function stepViews(value: unknown): StepView[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((step) => ({ status: stringField(step, "status"), attempts: attemptViews(field(step, "attempts")) }));
}

function attemptViews(value: unknown): AttemptView[] {
  if (!Array.isArray(value)) return [];
  return value.map((attempt) => ({
    kind: stringField(attempt, "kind"),
    scheduledAt: numberField(attempt, "scheduledAt"),
    startedAt: numberField(attempt, "startedAt"),
    endedAt: numberField(attempt, "endedAt"),
    timeout: stringField(field(attempt, "error"), "timeout"),
  }));
}

/** GET /v1/workflows/{id}/history: its events, none for any other answer. */
export function historyEvents(status: number, body: unknown): HistoryEvent[] {
  const events = field(body, "events");
  if (status !== 200 || !Array.isArray(events)) return [];
  return events.filter(isRecord).map((event) => ({
    type: String(event.type),
    stepId: stringField(event, "stepId"),
    attempt: numberField(event, "attempt"),
    at: Number(event.at),
    data: event.data,
  }));
}

/** GET /dev/workflows/{id}: the storage counters, undefined while the endpoint does not exist (404). */
export function devInfo(status: number, body: unknown): DevInfo | undefined {
  const storage = field(body, "storage");
  if (status !== 200 || !isRecord(storage)) return undefined;
  const alarmAt = field(body, "alarmAt");
  return {
    storage: {
      sqlCalls: Number(storage.sqlCalls),
      rowsRead: Number(storage.rowsRead),
      rowsWritten: Number(storage.rowsWritten),
      alarmWrites: numberField(storage, "alarmWrites"),
    },
    alarmAt: typeof alarmAt === "number" || alarmAt === null ? alarmAt : undefined,
  };
}

/** GET /dev/dispatch: the lag the consumers last reported, undefined while the endpoint does not exist. */
export function dispatchInfo(status: number, body: unknown): DispatchInfo | undefined {
  if (status !== 200 || !isRecord(body)) return undefined;
  return { lagMs: numberField(body, "lagMs") ?? null };
}

/** POST /v1/pools/{pool}/tasks/poll: the tasks taken; a task without a token or ids is left out (it could not be reported). */
export function pollAnswer(status: number, body: unknown, text: string, retryAfterS: number | undefined): PollAnswer {
  const tasks = field(body, "tasks");
  if (status !== 200 || !Array.isArray(tasks)) return { status, tasks: [], retryAfterS, error: text.slice(0, 300) };
  return { status, tasks: tasks.map(poolTask).filter((task) => task !== undefined) };
}

function poolTask(task: unknown): PoolTask | undefined {
  const token = stringField(task, "token");
  const workflowId = stringField(task, "workflowId");
  const stepId = stringField(task, "stepId");
  const attempt = numberField(task, "attempt");
  return token && workflowId && stepId && attempt !== undefined ? { token, workflowId, stepId, attempt } : undefined;
}
