import { WorkerActionSchema } from "../../domain/language/actions";
import type { ActionType } from "./action-type";

/**
 * The `worker` action: the user's own workers pull it from its pool (pools/), so no agent of ours performs it. A
 * task message for one reaches an agent only from a deployment that sent worker attempts through the queue: it
 * fails retryably, and the retry is offered to the pool.
 */
export const workerActionType: ActionType<"worker"> = {
  schema: WorkerActionSchema,
  perform: (task) =>
    Promise.resolve({
      type: "failed",
      error: { message: `a worker action is done by the workers of pool "${task.action.type === "worker" ? task.action.pool : "?"}", not by an agent`, retryable: true, rule: "default" },
    }),
};
