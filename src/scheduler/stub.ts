import type { WorkflowScheduler } from "./workflow-scheduler";

type RpcMethods = "start" | "describe" | "history" | "claim" | "heartbeat" | "report" | "cancel" | "retryStep" | "skipStep" | "compensate" | "recordDeadLetter" | "wake" | "inspect";

/**
 * The object's RPC methods with their plain result types. Results cross RPC by structured clone, which keeps
 * every value intact; the generated stub types only lose precision on free-form fields such as `output`.
 */
export type SchedulerClient = {
  [K in RpcMethods]: WorkflowScheduler[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/** Each workflow is its own object, named by tenant and id so two tenants can use the same workflow id. */
export function schedulerFor(env: Env, tenant: string, workflowId: string): SchedulerClient {
  return env.WORKFLOW_SCHEDULER.getByName(`${tenant}:${workflowId}`) as unknown as SchedulerClient;
}
