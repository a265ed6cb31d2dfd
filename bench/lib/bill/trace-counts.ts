// What a run's spans (trace-store.ts) count in the units Cloudflare bills: Worker requests, Durable Object requests
// and the objects' active wall time, SQLite rows read and written (a setAlarm bills as one row written), D1 rows read
// and written (the `meta` of each query), queue sends and consumer deliveries. Pure: spans in, counts out.
import type { Span } from "./trace-store.ts";

export interface TraceCounts {
  /** Invocations of the Worker itself: HTTP requests, queue batches, cron. */
  workerRequests: number;
  /** RPC calls, HTTP requests and alarms into Durable Objects, each a billed request. */
  doRequests: number;
  /** The same by what they called (an RPC method, `fetch` or `alarm`). */
  doRequestsBy: Record<string, number>;
  /** Per object, the union of its invocations' wall time (concurrent requests share it), summed over the objects. */
  doActiveMs: number;
  sqliteRowsRead: number;
  /** The statements' rows written, and one per setAlarm. */
  sqliteRowsWritten: number;
  alarmSets: number;
  d1RowsRead: number;
  d1RowsWritten: number;
  queueSends: number;
  /** Consumer invocations (batches). */
  queueBatches: number;
}

const TRIGGER = "faas.trigger";
const WORKER_TRIGGERS = new Set(["http", "pubsub", "cron", "scheduled"]);

const num = (value: unknown): number => (typeof value === "number" ? value : 0);
const isInvocation = (span: Span): boolean => typeof span.attributes[TRIGGER] === "string";
const isRoot = (span: Span): boolean => span.parentId === null;

/** The local runtime's own bookkeeping (its id-to-name table), which Cloudflare's runtime does not have. */
export const isEmulatorStatement = (span: Span): boolean => String(span.attributes["db.query.text"] ?? "").includes("__miniflare");

/** A Worker invocation: a root span of an HTTP request, a queue batch or a cron trigger. */
export const isWorkerRequest = (span: Span): boolean => isInvocation(span) && isRoot(span) && WORKER_TRIGGERS.has(String(span.attributes[TRIGGER]));

/** An object's alarm: a root invocation of its own ("timer"). */
const isAlarm = (span: Span): boolean => isRoot(span) && span.name === "alarm" && span.attributes[TRIGGER] === "timer";

/** An invocation of a Durable Object: any invocation that another one made (an RPC call, a fetch), or an alarm. */
export const isObjectRequest = (span: Span): boolean => isInvocation(span) && (!isRoot(span) || isAlarm(span));

/** Spans of the traces whose root `keep` accepts (e.g. not the harness's status reads), of one Worker's service. */
export function spansToCount(spans: readonly Span[], keep: (root: Span) => boolean): Span[] {
  const dropped = new Set(spans.filter((span) => isRoot(span) && !keep(span)).map((span) => span.traceId));
  return spans.filter((span) => !dropped.has(span.traceId));
}

/** The object an invocation ran in: the objectId of the Durable Object subrequest above it, when the trace has one. */
function objectOf(span: Span, byId: ReadonlyMap<string, Span>): string | undefined {
  for (let cursor = byId.get(span.parentId ?? ""); cursor; cursor = byId.get(cursor.parentId ?? "")) {
    const id = cursor.attributes.objectId;
    if (cursor.name === "durable_object_subrequest" && typeof id === "string") return id;
  }
  return undefined;
}

/**
 * The requests the spans show going to `origin`. Against the requests `origin` received, it says whether the store
 * has the whole run: under load the runtime's tail stream drops events, and the store the spans they carried.
 */
export const requestsTo = (spans: readonly Span[], origin: string): number =>
  spans.filter((span) => span.name === "fetch" && String(span.attributes["url.full"] ?? "").startsWith(origin)).length;

/** The total length of the union of [start, end) intervals. */
export function unionMs(intervals: ReadonlyArray<readonly [number, number]>): number {
  let total = 0;
  let current: [number, number] | undefined;
  for (const [start, end] of [...intervals].sort((a, b) => a[0] - b[0])) {
    if (current && start <= current[1]) current[1] = Math.max(current[1], end);
    else {
      if (current) total += current[1] - current[0];
      current = [start, end];
    }
  }
  return total + (current ? current[1] - current[0] : 0);
}

const endOf = (span: Span): number => span.startMs + (span.durationMs ?? 0);

/**
 * The latest end of the work an invocation traced in its own object (its statements, its fetches, its calls out,
 * which it waits on), or its start when it traced none. Another object's invocation is that object's time.
 */
function lastWorkOf(span: Span, childrenOf: ReadonlyMap<string, Span[]>): number {
  let last = span.startMs;
  const pending = [...(childrenOf.get(span.spanId) ?? [])];
  for (let child = pending.pop(); child; child = pending.pop()) {
    if (isInvocation(child)) continue;
    last = Math.max(last, endOf(child));
    pending.push(...(childrenOf.get(child.spanId) ?? []));
  }
  return last;
}

/**
 * When an invocation kept its object active: until its answer, or until the last work it traced if that was later
 * (an RPC method may answer, then go on, e.g. with the request it was handed). The local store closes an alarm's
 * span only when its object next wakes (or is evicted), so an alarm ends with the last work it traced.
 */
function activeInterval(span: Span, childrenOf: ReadonlyMap<string, Span[]>): [number, number] {
  const lastWork = lastWorkOf(span, childrenOf);
  return [span.startMs, isAlarm(span) ? lastWork : Math.max(endOf(span), lastWork)];
}

/**
 * Active wall time of the objects: each invocation's interval, merged per object (an invocation whose object the
 * trace does not name counts on its own, which can only overstate).
 */
function objectActiveMs(requests: readonly Span[], spans: readonly Span[]): number {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const childrenOf = new Map<string, Span[]>();
  for (const span of spans) {
    if (span.parentId === null) continue;
    const siblings = childrenOf.get(span.parentId) ?? [];
    siblings.push(span);
    childrenOf.set(span.parentId, siblings);
  }
  const perObject = new Map<string, Array<[number, number]>>();
  for (const span of requests) {
    const key = objectOf(span, byId) ?? `invocation:${span.spanId}`;
    const intervals = perObject.get(key) ?? [];
    intervals.push(activeInterval(span, childrenOf));
    perObject.set(key, intervals);
  }
  return [...perObject.values()].reduce((sum, intervals) => sum + unionMs(intervals), 0);
}

function tally(requests: readonly Span[]): Record<string, number> {
  const by: Record<string, number> = {};
  for (const span of requests) {
    const what = String(span.attributes["jsrpc.method"] ?? (isAlarm(span) ? "alarm" : "fetch"));
    by[what] = (by[what] ?? 0) + 1;
  }
  return by;
}

/** The billed units in `spans` (already narrowed by spansToCount). */
export function countSpans(spans: readonly Span[]): TraceCounts {
  const requests = spans.filter(isObjectRequest);
  const storage = spans.filter((span) => !isEmulatorStatement(span));
  const sum = (key: string): number => storage.reduce((total, span) => total + num(span.attributes[key]), 0);
  const named = (name: string): number => spans.filter((span) => span.name === name).length;
  const alarmSets = named("durable_object_storage_setAlarm");
  return {
    workerRequests: spans.filter(isWorkerRequest).length,
    doRequests: requests.length,
    doRequestsBy: tally(requests),
    doActiveMs: objectActiveMs(requests, spans),
    sqliteRowsRead: sum("cloudflare.durable_object.response.rows_read"),
    sqliteRowsWritten: sum("cloudflare.durable_object.response.rows_written") + alarmSets,
    alarmSets,
    d1RowsRead: sum("cloudflare.d1.response.rows_read"),
    d1RowsWritten: sum("cloudflare.d1.response.rows_written"),
    queueSends: named("queue_send"),
    queueBatches: spans.filter((span) => isWorkerRequest(span) && span.attributes[TRIGGER] === "pubsub").length,
  };
}
