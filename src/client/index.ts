export { createShepherdClient } from "./client";
export type * from "./client";
export { ShepherdApiError, type ApiErrorBody } from "./errors";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry";
export type { FetchLike, RetryRuntime } from "./retrying-fetch";
export { TaskAbortedError } from "./worker-types";
export type { AbortCause, TaskContext, TaskHandler, WorkerEvent, WorkerHandle, WorkerOptions, WorkerTask } from "./worker-types";
