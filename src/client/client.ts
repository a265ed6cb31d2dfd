import { hc, type InferRequestType } from "hono/client";
import type { ApiRoutes } from "../api/app";
import type { CommandBody } from "../domain/language/operator-commands";
import { commandOperations } from "./commands";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry";
import { REAL_RUNTIME, retryingFetch, type FetchLike, type RetryRuntime } from "./retrying-fetch";
import { unwrap, type SuccessBody } from "./unwrap";
import { startWorker } from "./worker";
import { workerApi } from "./worker-api";
import type { WorkerOptions } from "./worker-types";

export interface ShepherdClientOptions {
  /** Where the API is, e.g. "https://shepherd.example.com" (no trailing /v1). */
  url: string;
  /** An API token; it decides the tenant. */
  token: string;
  /** Defaults to the global fetch; a Worker passes a service binding's, a test the Worker's own. */
  fetch?: FetchLike;
  /** Overrides of DEFAULT_RETRY_POLICY. */
  retry?: Partial<RetryPolicy>;
  /** Clock, randomness and sleep of the retries; tests pass their own instead of waiting. */
  runtime?: Partial<RetryRuntime>;
}

type Api = ReturnType<typeof hc<ApiRoutes>>;
type Workflow = Api["v1"]["workflows"][":id"];
type Schedule = Api["v1"]["schedules"][":id"];
type Definition = Api["v1"]["definitions"][":name"];
type Webhook = Api["v1"]["webhooks"][":id"];

/** The workflow as the API shows it, which every operator command answers too. */
export type WorkflowView = SuccessBody<Awaited<ReturnType<Workflow["$get"]>>>;

/** A start; with `startAt` (epoch ms or ISO 8601) or `startDelayMs` it waits `scheduled` until then. */
export type StartRequest = InferRequestType<Api["v1"]["workflows"]["$post"]>["json"];
/** Each item's answer to `startBatch`, in item order: `status` 201 or 200 with its `workflow`, else its `error`. */
export type StartBatchResult = SuccessBody<Awaited<ReturnType<Api["v1"]["workflows"]["batch"]["$post"]>>>["results"][number];
export type ListQuery = InferRequestType<Api["v1"]["workflows"]["$get"]>["query"];
export type HistoryQuery = InferRequestType<Workflow["history"]["$get"]>["query"];
export type MapItemsQuery = InferRequestType<Workflow["steps"][":stepId"]["items"]["$get"]>["query"];
/** The workflow's result once it has ended (output or error), or its status while it runs. */
export type WorkflowResult = SuccessBody<Awaited<ReturnType<Workflow["result"]["$get"]>>>;
export type TerminateRequest = CommandBody<"terminate">;
export type RedriveRequest = CommandBody<"redrive">;
export type SkipStepRequest = CommandBody<"skipStep">;
export type SendEventRequest = InferRequestType<Workflow["events"]["$post"]>["json"];
export type DefinitionBody = InferRequestType<Definition["$put"]>["json"];
export type DefinitionListQuery = InferRequestType<Api["v1"]["definitions"]["$get"]>["query"];
export type DefinitionVersionsQuery = InferRequestType<Definition["versions"]["$get"]>["query"];
export type ScheduleSpec = InferRequestType<Api["v1"]["schedules"]["$post"]>["json"];
export type ScheduleListQuery = InferRequestType<Api["v1"]["schedules"]["$get"]>["query"];
export type MetricsSeriesQuery = InferRequestType<Api["v1"]["metrics"]["series"]["$get"]>["query"];
export type StartDeadLetterQuery = InferRequestType<Api["v1"]["starts"]["dead-letters"]["$get"]>["query"];
export type BulkRequest = InferRequestType<Api["v1"]["bulk"]["$post"]>["json"];
export type BulkListQuery = InferRequestType<Api["v1"]["bulk"]["$get"]>["query"];
export type TargetListQuery = InferRequestType<Api["v1"]["targets"]["$get"]>["query"];
export type WebhookSpec = InferRequestType<Webhook["$put"]>["json"];

/** A typed client of the Shepherd API: request and response types are the server's own route schemas. */
export function createShepherdClient(options: ShepherdClientOptions) {
  const runtime = { ...REAL_RUNTIME, ...options.runtime };
  const fetch = retryingFetch(options.fetch ?? ((input, init) => globalThis.fetch(input, init)), { ...DEFAULT_RETRY_POLICY, ...options.retry }, runtime);
  const headers = { Authorization: `Bearer ${options.token}` };
  const api = hc<ApiRoutes>(options.url, { fetch, headers });
  const connection = { url: options.url, fetch, headers };
  return {
    ...workflowOperations(api),
    ...commandOperations<WorkflowView>(connection),
    definitions: definitionOperations(api),
    schedules: scheduleOperations(api),
    bulk: bulkOperations(api),
    webhooks: webhookOperations(api),
    /** The circuit breakers of the tenant's target hosts that have seen transient failures, by host. */
    targets: (query: TargetListQuery = {}) => unwrap(api.v1.targets.$get({ query })),
    metrics: () => unwrap(api.v1.metrics.$get()),
    /** The tenant's figures per step over a range (default: the last hour, a point a minute). */
    metricsSeries: (query: MetricsSeriesQuery = {}) => unwrap(api.v1.metrics.series.$get({ query })),
    /** The tenant's worker pools: tasks pending and running, the oldest wait, the workers seen in the last 5 minutes. */
    pools: () => unwrap(api.v1.pools.$get()),
    /** A page of the STARTS queue's messages of the tenant that could never start, newest first, with their errors. */
    startDeadLetters: (query: StartDeadLetterQuery = {}) => unwrap(api.v1.starts["dead-letters"].$get({ query })),
    /** Starts a worker of the pool: it polls, runs `handler` per task with heartbeats, and reports (worker-types.ts). */
    worker: (workerOptions: WorkerOptions) => startWorker(workerApi(api, connection), workerOptions, runtime.random),
  };
}

export type ShepherdClient = ReturnType<typeof createShepherdClient>;

function workflowOperations(api: Api) {
  const workflow: Workflow = api.v1.workflows[":id"];
  return {
    start: (request: StartRequest) => unwrap(api.v1.workflows.$post({ json: request })),
    /**
     * Up to 100 starts in one request, each started as `start` would start it alone. A refused item throws nothing:
     * its result says why (only a refused batch, empty or too long, throws).
     */
    startBatch: (workflows: StartRequest[]) => unwrap(api.v1.workflows.batch.$post({ json: { workflows } })),
    get: (id: string) => unwrap(workflow.$get({ param: { id } })),
    list: (query: ListQuery = {}) => unwrap(api.v1.workflows.$get({ query })),
    history: (id: string, query: HistoryQuery = {}) => unwrap(workflow.history.$get({ param: { id }, query })),
    diagnosis: (id: string) => unwrap(workflow.diagnosis.$get({ param: { id } })),
    /**
     * A long poll: the result as soon as the workflow has ended (a final status, with its `output` or `error`), or only
     * `{id, status}` once `waitMs` (at most 60000, default 30000) passed first; ask again to go on waiting.
     */
    result: (id: string, options: { waitMs?: number; signal?: AbortSignal } = {}): Promise<WorkflowResult> =>
      unwrap(workflow.result.$get({ param: { id }, query: options.waitMs === undefined ? {} : { waitMs: options.waitMs } }, options.signal ? { init: { signal: options.signal } } : undefined)),
    sendEvent: (id: string, event: SendEventRequest) => unwrap(workflow.events.$post({ param: { id }, json: event })),
    /** A map step's items in item order, a page at a time. */
    mapItems: (id: string, stepId: string, query: MapItemsQuery = {}) => unwrap(workflow.steps[":stepId"].items.$get({ param: { id, stepId }, query })),
    /** One attempt of a step with what it sent (credentials redacted) and what came back, each body bounded. */
    attempt: (id: string, stepId: string, n: number) => unwrap(workflow.steps[":stepId"].attempts[":n"].$get({ param: { id, stepId, n: String(n) } })),
  };
}

function definitionOperations(api: Api) {
  const definition: Definition = api.v1.definitions[":name"];
  return {
    publish: (name: string, body: DefinitionBody) => unwrap(definition.$put({ param: { name }, json: body })),
    /** The latest version, or the given one. */
    get: (name: string, version?: number) =>
      version === undefined
        ? unwrap(definition.$get({ param: { name } }))
        : unwrap(definition.versions[":version"].$get({ param: { name, version: String(version) } })),
    list: (query: DefinitionListQuery = {}) => unwrap(api.v1.definitions.$get({ query })),
    /** A name's versions, newest first, without their content. */
    versions: (name: string, query: DefinitionVersionsQuery = {}) => unwrap(definition.versions.$get({ param: { name }, query })),
  };
}

function scheduleOperations(api: Api) {
  const schedule: Schedule = api.v1.schedules[":id"];
  return {
    create: (spec: ScheduleSpec) => unwrap(api.v1.schedules.$post({ json: spec })),
    get: (id: string) => unwrap(schedule.$get({ param: { id } })),
    list: (query: ScheduleListQuery = {}) => unwrap(api.v1.schedules.$get({ query })),
    pause: (id: string) => unwrap(schedule.pause.$post({ param: { id } })),
    resume: (id: string) => unwrap(schedule.resume.$post({ param: { id } })),
    trigger: (id: string) => unwrap(schedule.trigger.$post({ param: { id } })),
    delete: (id: string) => unwrap(schedule.$delete({ param: { id } })),
  };
}

function webhookOperations(api: Api) {
  const webhook: Webhook = api.v1.webhooks[":id"];
  return {
    /** Creates or replaces a webhook; the answer shows the secret once, when the service made it. */
    put: (id: string, spec: WebhookSpec) => unwrap(webhook.$put({ param: { id }, json: spec })),
    get: (id: string) => unwrap(webhook.$get({ param: { id } })),
    list: () => unwrap(api.v1.webhooks.$get()),
    delete: (id: string) => unwrap(webhook.$delete({ param: { id } })),
    /** Its recent deliveries, newest first. */
    deliveries: (id: string) => unwrap(webhook.deliveries.$get({ param: { id } })),
  };
}

function bulkOperations(api: Api) {
  return {
    /** Starts a bulk job: the action on every workflow the filter matches, paced, in the background. */
    start: (request: BulkRequest) => unwrap(api.v1.bulk.$post({ json: request })),
    get: (id: string) => unwrap(api.v1.bulk[":id"].$get({ param: { id } })),
    list: (query: BulkListQuery = {}) => unwrap(api.v1.bulk.$get({ query })),
  };
}
