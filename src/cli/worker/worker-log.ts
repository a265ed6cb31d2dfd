// What `shepherd worker` prints on stderr as it goes: one line per task event and per failed poll, for a person (text,
// with the time) or for a log collector (--json, one object a line). Task tokens are capabilities: never printed.
import { ShepherdApiError, TaskAbortedError, type WorkerEvent, type WorkerTask } from "../../client/index";
import { duration, time } from "../format";
import type { Output } from "../output";

export function logEvent(out: Output, event: WorkerEvent): void {
  out.problem(out.json ? JSON.stringify(eventJson(event)) : `${time(Date.now())}  ${eventText(event)}`);
}

/** A line of the worker's own (started, stopping), in the same form. */
export function logNote(out: Output, note: string, fields: Record<string, unknown> = {}): void {
  out.problem(out.json ? JSON.stringify({ type: "note", message: note, ...fields }) : `${time(Date.now())}  ${note}`);
}

function eventText(event: WorkerEvent): string {
  switch (event.type) {
    case "task_started":
      return `${taskName(event.task)}: started`;
    case "task_completed":
      return `${taskName(event.task)}: completed in ${duration(event.durationMs)}`;
    case "task_failed":
      return `${taskName(event.task)}: failed in ${duration(event.durationMs)}${event.error.retryable ? "" : " for good"}: ${lastLine(event.error.message)}`;
    case "task_abandoned":
      return `${taskName(event.task)}: stopped, ${new TaskAbortedError(event.cause).message}`;
    case "report_failed":
      return `${taskName(event.task)}: its outcome could not be reported (${reasonOf(event.error)}); the service will time the attempt out`;
    case "heartbeat_failed":
      return `${taskName(event.task)}: a heartbeat failed (${reasonOf(event.error)})`;
    case "poll_failed":
      return `poll failed (${reasonOf(event.error)}); polling again in ${duration(event.retryInMs)}`;
  }
}

function eventJson(event: WorkerEvent): Record<string, unknown> {
  const { type } = event;
  const task = "task" in event ? { task: taskFields(event.task) } : {};
  const error = "error" in event ? { error: event.type === "task_failed" ? event.error : reasonOf(event.error) } : {};
  const rest = Object.fromEntries(Object.entries(event).filter(([key]) => !["type", "task", "error"].includes(key)));
  return { type, ...task, ...rest, ...error };
}

function taskFields(task: WorkerTask): Record<string, unknown> {
  const { workflowId, stepId, index, attempt, kind } = task;
  return { workflowId, stepId, ...(index === undefined ? {} : { index }), attempt, kind };
}

/** `album-7/thumbs[3] attempt 2`, and `(compensation)` for an undo. */
function taskName(task: WorkerTask): string {
  const item = task.index === undefined ? "" : `[${task.index}]`;
  return `${task.workflowId}/${task.stepId}${item} attempt ${task.attempt}${task.kind === "compensation" ? " (compensation)" : ""}`;
}

function reasonOf(error: unknown): string {
  if (error instanceof ShepherdApiError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** The last line of a message: where a failing program says why. The whole message is the step's error. */
function lastLine(text: string): string {
  return text.split("\n").findLast((line) => line.trim() !== "") ?? text;
}
