/** The action types an agent can perform, by type: an action type in the language without one here does not compile. */
import type { ActionTypeName } from "../../domain/language/actions";
import type { ClaimedTask } from "../../domain/machine";
import type { AttemptReport } from "../../domain/machine/task-message";
import type { TargetPolicy } from "../../domain/security/target-policy";
import type { ActionType } from "./action-type";
import { httpActionType } from "./http";
import { workerActionType } from "./worker";

const ACTION_TYPES: { [T in ActionTypeName]: ActionType<T> } = {
  http: httpActionType,
  worker: workerActionType,
};

/** Performs one attempt of the task's action, by its type. */
export function performAction(task: ClaimedTask, token: string, policy: TargetPolicy, signal: AbortSignal): Promise<AttemptReport> {
  return ACTION_TYPES[task.action.type].perform(task, token, policy, signal);
}
