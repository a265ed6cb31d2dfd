import type { WorkflowScheduler } from "./workflow-scheduler";

const RPC_METHODS = [
  "start",
  "describe",
  "history",
  "claim",
  "heartbeat",
  "report",
  "cancel",
  "retryStep",
  "skipStep",
  "compensate",
  "recordDeadLetter",
  "wake",
  "inspect",
] as const;
type RpcMethod = (typeof RPC_METHODS)[number];

/**
 * The object's RPC methods with their plain result types. Results cross RPC by structured clone, which keeps
 * every value intact; the generated stub types only lose precision on free-form fields such as `output`.
 */
export type SchedulerClient = {
  [K in RpcMethod]: WorkflowScheduler[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/**
 * Calls that may run twice with the same effect: reads, the idempotent start, and the fenced agent calls
 * (a repeated claim or report for the same attempt is refused, never applied twice). Operator actions are not
 * retried: a reset after one was applied would turn a success into a confusing 409.
 */
const RETRIED: ReadonlySet<RpcMethod> = new Set(["start", "describe", "history", "claim", "heartbeat", "report", "recordDeadLetter", "wake", "inspect"]);
const RPC_TRIES = 3;

/**
 * Durable Object errors say whether a retry can help: `retryable`, or `durableObjectReset` (the object was
 * reset or aborted mid-call; what it had not committed is gone). An overloaded object must be given time instead.
 */
export function worthRetrying(error: unknown): boolean {
  const flags = error as { retryable?: unknown; durableObjectReset?: unknown; overloaded?: unknown } | null;
  return (flags?.retryable === true || flags?.durableObjectReset === true) && flags.overloaded !== true;
}

async function call(env: Env, name: string, method: RpcMethod, args: unknown[]): Promise<unknown> {
  for (let attempt = 1; ; attempt++) {
    // A fresh stub every time: after a reset ("code was updated", an eviction) the old stub stays broken.
    const stub = env.WORKFLOW_SCHEDULER.getByName(name) as unknown as Record<RpcMethod, (...args: unknown[]) => Promise<unknown>>;
    try {
      return await stub[method](...args);
    } catch (error) {
      if (attempt >= RPC_TRIES || !RETRIED.has(method) || !worthRetrying(error)) throw error;
      // Jittered, so callers hit by the same reset do not come back in lockstep.
      await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt * (0.5 + Math.random())));
    }
  }
}

/** Each workflow is its own object, named by tenant and id so two tenants can use the same workflow id. */
export function schedulerFor(env: Env, tenant: string, workflowId: string): SchedulerClient {
  const name = `${tenant}:${workflowId}`;
  return Object.fromEntries(RPC_METHODS.map((method) => [method, (...args: unknown[]) => call(env, name, method, args)])) as unknown as SchedulerClient;
}
