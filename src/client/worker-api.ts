// The four calls of a pool's worker: the poll (the tenant's API token) and the attempt's heartbeat, complete and
// fail (its task token alone). Each throws a ShepherdApiError for a non-2xx answer, after the client's retries.
import type { hc } from "hono/client";
import type { ApiRoutes } from "../api/app";
import type { Connection } from "./commands";
import { ShepherdApiError } from "./errors";
import { unwrap } from "./unwrap";
import type { WorkerTask } from "./worker-types";

type Api = ReturnType<typeof hc<ApiRoutes>>;

export interface PollRequest {
  workerId: string;
  waitMs: number;
  max: number;
}

export interface WorkerApi {
  /** Resolves as soon as the pool has tasks, or with none after `waitMs`; `signal` abandons the wait. */
  poll(pool: string, request: PollRequest, signal: AbortSignal): Promise<WorkerTask[]>;
  heartbeat(token: string, progress: { value?: unknown }, signal: AbortSignal): Promise<{ cancelRequested: boolean }>;
  complete(token: string, output: unknown): Promise<void>;
  fail(token: string, error: { message: string; retryable: boolean }): Promise<void>;
}

export function workerApi(api: Api, connection: Connection): WorkerApi {
  const onTask = (token: string, report: string) => `/v1/tasks/${encodeURIComponent(token)}/${report}`;
  return {
    async poll(pool, request, signal) {
      const { tasks } = await unwrap(api.v1.pools[":pool"].tasks.poll.$post({ param: { pool }, json: request }, { init: { signal } }));
      // Typed by the route's own schema: a WorkerTask that drifted from it would not compile here.
      const typed: WorkerTask[] = tasks;
      return typed;
    },
    // The task routes are sent by hand, as the operator commands are: they are not among the typed routes (ApiRoutes).
    async heartbeat(token, progress, signal) {
      const body = await post<{ cancelRequested?: unknown }>(connection, onTask(token, "heartbeat"), "value" in progress ? { progress: progress.value } : {}, signal);
      return { cancelRequested: body.cancelRequested === true };
    },
    async complete(token, output) {
      // JSON has no undefined: a handler that returns nothing completes with no output (null).
      await post(connection, onTask(token, "complete"), output === undefined ? {} : { output });
    },
    async fail(token, error) {
      await post(connection, onTask(token, "fail"), { error });
    },
  };
}

async function post<T>(connection: Connection, path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  const headers = { ...connection.headers, "Content-Type": "application/json" };
  const response = await connection.fetch(`${connection.url.replace(/\/+$/, "")}${path}`, { method: "POST", headers, body: JSON.stringify(body), signal });
  if (!response.ok) throw await ShepherdApiError.from(response);
  return (await response.json()) as T;
}
