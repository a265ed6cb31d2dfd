// A small HTTP client for Shepherd's API. It never throws for what the server does (a refused connection
// during the restart is an answer too: status 0), every request has a timeout, and it only talks to
// 127.0.0.1, so the soak cannot send traffic anywhere else.
/* global URL, Buffer */
import { requestJson } from "../../scripts/lib/http-json.ts";
import { API_TOKEN } from "./shepherd.ts";
import { field, isBatchAnswer, isBulkJob, isDevDispatch, isDevWorkflow, isHistoryEvent, isIndexPage, isMapItemsPage, isPoolList, isResultAnswer, isScheduleView, isStartDeadLetterPage, isTargetList, isWorkflowView } from "./api-shapes.ts";
import type { BatchAnswer, BulkJobView, DevDispatch, DevWorkflow, HistoryEvent, IndexPage, MapItemsPage, PoolList, ResultAnswer, ScheduleView, StartDeadLetterPage, TargetList } from "./api-shapes.ts";
import { TERMINAL_WORKFLOW_STATUSES } from "../../src/domain/contract.ts";

const REQUEST_TIMEOUT_MS = 5_000;
/** A batch of starts is up to a hundred starts in one request: more time than one. */
const BATCH_TIMEOUT_MS = 15_000;
/** A long poll's answer may come at its waitMs: the request waits that long and a margin more. */
const LONG_POLL_MARGIN_MS = 10_000;

/** One answer; status 0 when none came (refused, reset, timed out). */
export interface Answer {
  status: number;
  /** The JSON body; `{text}` for a body that is not JSON; null for none. */
  body: unknown;
  error: string | null;
  /** The raw Retry-After header (or null): back-pressure is part of the answer. */
  retryAfter: string | null;
  /** The body's size in bytes (0 for none): the contract bounds some answers (a map's workflow: < 128 KiB). */
  bytes: number;
}

/** An answer of a route whose body the soak reads: `value` is the body when it is a 2xx of the route's shape. */
export interface TypedAnswer<T> extends Answer {
  value: T | null;
}

/** The whole history, or as much of it as was read before a page failed. */
export interface History {
  ok: boolean;
  status?: number | string;
  events: HistoryEvent[];
}

/** What requestJson answers, as the client reads it. */
interface JsonResponse {
  status: number;
  body: unknown;
  text: string;
  headers: Headers;
}

interface RequestOptions {
  body?: unknown;
  timeoutMs?: number;
}

type Request = (method: string, path: string, options?: RequestOptions) => Promise<Answer>;

export type ShepherdClient = ReturnType<typeof createClient>;

/** A client of the soak's own tenant, or of another one's (`token`: the noisy-neighbour phase). */
export function createClient(baseUrl: string, { token = API_TOKEN }: { token?: string } = {}) {
  const base = new URL(baseUrl);
  if (base.hostname !== "127.0.0.1") throw new Error(`the chaos client only talks to 127.0.0.1 (got ${baseUrl})`);
  const request: Request = (method, path, options = {}) => requestApi(base, token, method, path, options);
  const read = <T>(path: string, is: (body: unknown) => body is T) => request("GET", path).then((answer) => typed(answer, is));
  const id = encodeURIComponent;
  return {
    baseUrl: base.origin,
    request,
    startWorkflow: (payload: unknown) => request("POST", "/v1/workflows", { body: payload }),
    getWorkflow: (workflowId: string) => read(`/v1/workflows/${id(workflowId)}`, isWorkflowView),
    /** Start bodies in one request; each item answered as its start alone would be, in item order (contract v1.2). */
    startBatch: (payloads: readonly unknown[]): Promise<TypedAnswer<BatchAnswer>> =>
      request("POST", "/v1/workflows/batch", { body: { workflows: payloads }, timeoutMs: BATCH_TIMEOUT_MS }).then((answer) => typed(answer, isBatchAnswer)),
    /** The long poll for a workflow's result: 200 once it has ended, 202 when waitMs passes first. */
    getResult: (workflowId: string, waitMs: number): Promise<TypedAnswer<ResultAnswer>> =>
      request("GET", `/v1/workflows/${id(workflowId)}/result?waitMs=${waitMs}`, { timeoutMs: waitMs + LONG_POLL_MARGIN_MS }).then((answer) => typed(answer, isResultAnswer)),
    /** Puts a message {tenant, start} on the STARTS queue, as another Worker would (the dev route; 202 once sent). */
    queueStart: (message: unknown) => request("POST", "/dev/starts", { body: message }),
    /** The first page of the tenant's STARTS messages that could never start. */
    listStartDeadLetters: (): Promise<TypedAnswer<StartDeadLetterPage>> => read("/v1/starts/dead-letters?limit=100", isStartDeadLetterPage),
    listWorkflows: (cursor?: string | null, { name, parentId, limit = 100 }: { name?: string; parentId?: string; limit?: number } = {}): Promise<TypedAnswer<IndexPage>> =>
      read(`/v1/workflows?limit=${limit}${name ? `&name=${id(name)}` : ""}${parentId ? `&parentId=${id(parentId)}` : ""}${cursor ? `&cursor=${id(cursor)}` : ""}`, isIndexPage),
    cancelWorkflow: (workflowId: string, reason: string) => request("POST", `/v1/workflows/${id(workflowId)}/cancel`, { body: { reason } }),
    /** An event (signal) for a workflow: {event, payload?, id?}. */
    sendEvent: (workflowId: string, event: unknown) => request("POST", `/v1/workflows/${id(workflowId)}/events`, { body: event }),
    /** Cron schedules (contract v1.1, "Schedules (cron)"). */
    createSchedule: (spec: unknown): Promise<TypedAnswer<ScheduleView>> => request("POST", "/v1/schedules", { body: spec }).then((answer) => typed(answer, isScheduleView)),
    getSchedule: (scheduleId: string) => read(`/v1/schedules/${id(scheduleId)}`, isScheduleView),
    deleteSchedule: (scheduleId: string) => request("DELETE", `/v1/schedules/${id(scheduleId)}`),
    /** A page of a map step's items, in item order from `cursor` (contract v1.2, "Map"). */
    getMapItems: (workflowId: string, stepId: string, cursor?: string): Promise<TypedAnswer<MapItemsPage>> =>
      read(`/v1/workflows/${id(workflowId)}/steps/${id(stepId)}/items?limit=1000${cursor ? `&cursor=${id(cursor)}` : ""}`, isMapItemsPage),
    /** The tenant's circuit breakers by target host (contract v1.1, "Supervision beyond deadlines"). */
    listTargets: (): Promise<TypedAnswer<TargetList>> => read("/v1/targets?limit=100", isTargetList),
    /** The tenant's worker pools (contract v1.2, "The user's own agents: worker pools"). */
    listPools: (): Promise<TypedAnswer<PoolList>> => read("/v1/pools", isPoolList),
    /** A bulk job: the action on every workflow its filter matches, run by the service (contract v1.2, "Bulk operations"). */
    startBulkJob: (job: unknown): Promise<TypedAnswer<BulkJobView>> => request("POST", "/v1/bulk", { body: job }).then((answer) => typed(answer, isBulkJob)),
    getBulkJob: (jobId: string) => read(`/v1/bulk/${id(jobId)}`, isBulkJob),
    getDevWorkflow: (workflowId: string): Promise<TypedAnswer<DevWorkflow>> => read(`/dev/workflows/${id(workflowId)}`, isDevWorkflow),
    getDevDispatch: (): Promise<TypedAnswer<DevDispatch>> => read("/dev/dispatch", isDevDispatch),
    /** Runs the Worker's cron handler (the sweep) now; wrangler dev has --test-scheduled for it. */
    runCronSweep: () => request("GET", "/__scheduled?cron=*+*+*+*+*"),
    /** The whole history, page by page (bounded: at most `maxPages` pages). */
    getHistory: (workflowId: string, maxPages = 20) => readHistory(request, workflowId, maxPages),
  };
}

/** One request; auth is required on /v1 and the dev routes (task callbacks use their token, but the soak makes none). */
async function requestApi(base: URL, token: string, method: string, path: string, { body, timeoutMs = REQUEST_TIMEOUT_MS }: RequestOptions): Promise<Answer> {
  const headers: Record<string, string> = path.startsWith("/v1/") || path.startsWith("/dev/") ? { Authorization: `Bearer ${token}` } : {};
  try {
    const init = { method, body, headers, timeoutMs };
    const res: JsonResponse = await requestJson(new URL(path, base), init);
    const parsed = res.body !== undefined ? res.body : res.text ? { text: res.text } : null;
    return { status: res.status, body: parsed, error: null, retryAfter: res.headers.get("retry-after"), bytes: Buffer.byteLength(res.text) };
  } catch (error) {
    return { status: 0, body: null, error: failureName(error), retryAfter: null, bytes: 0 };
  }
}

/** Why a request got no answer: the socket's code (ECONNREFUSED, …), else the error's name (TimeoutError), else `fallback`. */
export function failureName(error: unknown, fallback: string = String(error)): string {
  return String(field(field(error, "cause"), "code") ?? field(error, "name") ?? fallback);
}

function typed<T>(answer: Answer, is: (body: unknown) => body is T): TypedAnswer<T> {
  if (answer.status >= 200 && answer.status < 300 && is(answer.body)) return { ...answer, value: answer.body };
  return { ...answer, value: null };
}

async function readHistory(request: Request, workflowId: string, maxPages: number): Promise<History> {
  const events: HistoryEvent[] = [];
  let after = 0;
  for (let page = 0; page < maxPages; page++) {
    const res = await request("GET", `/v1/workflows/${encodeURIComponent(workflowId)}/history?after=${after}&limit=1000`);
    if (res.status !== 200) return { ok: false, status: res.status, events };
    const pageEvents = field(res.body, "events");
    if (Array.isArray(pageEvents)) events.push(...pageEvents.filter(isHistoryEvent));
    const nextAfter = field(res.body, "nextAfter");
    if (typeof nextAfter !== "number") return { ok: true, events };
    after = nextAfter;
  }
  return { ok: false, status: "too many pages", events };
}

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(TERMINAL_WORKFLOW_STATUSES);

/** Whether a status, when there is one, is terminal. */
export const isTerminal = (status: string | null | undefined): boolean => typeof status === "string" && TERMINAL_STATUSES.has(status);
