import type { DurableObject } from "cloudflare:workers";
import { backoffMs } from "../domain/machine/backoff";
import { OPERATOR_COMMANDS, type RpcRetry } from "../domain/contract";
import type { CommandRequest } from "../domain/language/operator-commands";
import type { WorkflowScheduler } from "./object";
import { workflowObjectName } from "./deliveries/workflow-stub";

/** The object's own RPC methods: its public methods, less what every Durable Object has. */
type RpcMethod = {
  [K in Exclude<keyof WorkflowScheduler, keyof DurableObject<Env>>]: WorkflowScheduler[K] extends (...args: never[]) => unknown ? K : never;
}[Exclude<keyof WorkflowScheduler, keyof DurableObject<Env>>];

/**
 * Whether each call may be retried after a reset: calls that may run twice with the same effect (reads, the
 * idempotent start, the fenced agent calls: a repeated claim or report for the same attempt is refused, never
 * applied twice) are; operator actions are not, since a reset after one was applied would turn a success into a
 * confusing 409. A `Record` over every RPC method, so a method added to the object without a decision here
 * does not compile; an operator command's is in its row of the commands' table.
 */
const RETRIES: Record<RpcMethod, RpcRetry | ((args: unknown[]) => RpcRetry)> = {
  start: "retried",
  describe: "retried",
  // A read: asked again after a reset, it waits out what is left of the same `until`.
  result: "retried",
  abandonResult: "retried",
  history: "retried",
  mapItems: "retried",
  attempt: "retried",
  diagnosis: "retried",
  claim: "retried",
  heartbeat: "retried",
  report: "retried",
  recordDeadLetter: "retried",
  // Releasing a step that is no longer parked changes nothing.
  releaseParked: "retried",
  // Fenced by the child's id: a notice applied before the reset is not applied again.
  childEnded: "retried",
  wake: "retried",
  // Fenced by the message's afterSeq: a repeated report finds its message no longer in flight and changes nothing.
  reportWebhooks: "retried",
  inspect: "retried",
  command: ([request]) => OPERATOR_COMMANDS[(request as CommandRequest).command].retries,
  // An event sent without an id could be delivered twice.
  sendEvent: "once",
};
const RPC_METHODS = Object.keys(RETRIES) as RpcMethod[];
const RPC_TRIES = 3;
const RPC_RETRY = { initialMs: 50, maxMs: 1_000, jitter: 0.5 };

/**
 * The object's RPC methods with their plain result types. Results cross RPC by structured clone, which keeps
 * every value intact; the generated stub types only lose precision on free-form fields such as `output`.
 */
export type SchedulerClient = {
  [K in RpcMethod]: WorkflowScheduler[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/**
 * Durable Object errors say whether a retry can help: `retryable`, or `durableObjectReset` (the object was
 * reset or aborted mid-call; what it had not committed is gone). An overloaded object must be given time instead.
 */
export function worthRetrying(error: unknown): boolean {
  const flags = error as { retryable?: unknown; durableObjectReset?: unknown; overloaded?: unknown } | null;
  return (flags?.retryable === true || flags?.durableObjectReset === true) && flags.overloaded !== true;
}

function retriesOf(method: RpcMethod, args: unknown[]): RpcRetry {
  const retries = RETRIES[method];
  return typeof retries === "function" ? retries(args) : retries;
}

async function call(env: Env, name: string, method: RpcMethod, args: unknown[]): Promise<unknown> {
  for (let attempt = 1; ; attempt++) {
    // A fresh stub every time: after a reset ("code was updated", an eviction) the old stub stays broken.
    const stub = env.WORKFLOW_SCHEDULER.getByName(name) as unknown as Record<RpcMethod, (...args: unknown[]) => Promise<unknown>>;
    try {
      return await stub[method](...args);
    } catch (error) {
      if (attempt >= RPC_TRIES || retriesOf(method, args) !== "retried" || !worthRetrying(error)) throw error;
      // Jittered, so callers hit by the same reset do not come back in lockstep.
      await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt - 1, RPC_RETRY)));
    }
  }
}

/**
 * The retrying RPC client of one workflow's object, named by tenant and id so two tenants can use the same
 * workflow id. The only way the rest of the Worker calls a Scheduler.
 */
export function schedulerFor(env: Env, tenant: string, workflowId: string): SchedulerClient {
  const name = workflowObjectName(tenant, workflowId);
  return Object.fromEntries(RPC_METHODS.map((method) => [method, (...args: unknown[]) => call(env, name, method, args)])) as unknown as SchedulerClient;
}
