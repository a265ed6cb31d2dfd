// The HTTP server under the project's fake remote services: the quickstart's (scripts/example-remote.ts),
// the bench's (bench/lib/remote.ts) and the chaos soak's (chaos/remote.ts). It listens on 127.0.0.1 only,
// reads each request's body (bounded), logs every request per Idempotency-Key with when it arrived and when
// it was answered, answers JSON, can hold a request open (a hang) or answer late (a slow remote), and
// closes gracefully, held sockets included. What each path does is the service's own `handle`.
//
// Not shared with test/helpers/remote.ts: that one is no server but a `fetch` spy inside the Workers
// runtime, answering from the test's handler; all it has in common with this is a count per key, three
// lines not worth an import from the test suite into the tools' Node code.
import { EventEmitter } from "node:events";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { heldRequests } from "./held-requests.ts";
import type { HeldRequests } from "./held-requests.ts";
import { readBody, parseJson } from "./request-body.ts";

export const HOST = "127.0.0.1";
/** Wall-clock milliseconds with sub-millisecond resolution, comparable with Date.now() in the engines. */
export const now = (): number => performance.timeOrigin + performance.now();
/** Where the request log files a request that carries no Idempotency-Key. */
export const NO_KEY = "(none)";
const MAX_BODY_BYTES = 1024 * 1024;
/**
 * Idle keep-alive connections are kept this long (Node's default is 5 s): the engines' connection pools
 * reuse them, and a server closing an idle socket just as a caller reuses it resets that request.
 */
const KEEP_ALIVE_MS = 30_000;

/** One request in the log: when it arrived and, once answered, with what and when. */
export interface RequestRecord {
  method: string;
  path: string;
  /** Shepherd-Attempt as a number, 0 without one. */
  attempt: number;
  arrivedAt: number;
  status?: number;
  respondedAt?: number;
}

/** An answer, sent as JSON. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** What `handle` gets for one request, its body read. */
export interface FakeRemoteCall {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  query: URLSearchParams;
  /** The Idempotency-Key, or undefined. */
  key: string | undefined;
  attempt: number;
  text: string;
  /** The body parsed, undefined when it is empty or not JSON. */
  json: unknown;
  /** This request's record in the log, to add to. */
  entry: RequestRecord;
  /** The key's records so far, this one last. */
  requests: RequestRecord[];
  /** Keeps the request open until the caller closes it, or ms at most; `return call.hold()` answers nothing. */
  hold(ms?: number): undefined;
  /** Waits ms while holding the request; false when the caller closed it meanwhile. */
  pause(ms: number): Promise<boolean>;
}

/** A reply, or undefined when the service answers nothing (it held the request). */
export type Handle = (call: FakeRemoteCall) => Reply | undefined | Promise<Reply | undefined>;

export interface RemoteEvents {
  request: [key: string, entry: RequestRecord];
}

export interface FakeRemote {
  url: string;
  /** Emits "request" (key, entry) as each request arrives. */
  events: EventEmitter<RemoteEvents>;
  /** The key's log, in arrival order. */
  requestsFor(key: string): RequestRecord[];
  heldCount(): number;
  /** Ends every held request and stops. */
  close(): Promise<void>;
}

export interface FakeRemoteOptions {
  port: number;
  handle: Handle;
  maxBodyBytes?: number;
}

/**
 * Starts a fake remote on 127.0.0.1:port. For every request, once its body is read, `handle(call)` returns
 * the answer (see FakeRemoteCall and Reply). Resolves once listening.
 */
export async function startFakeRemote({ port, handle, maxBodyBytes = MAX_BODY_BYTES }: FakeRemoteOptions): Promise<FakeRemote> {
  const log = requestLog();
  const held = heldRequests();
  const server = createServer((req, res) => void serve(req, res, { handle, maxBodyBytes, log, held }));
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  await listen(server, port);
  return {
    url: `http://${HOST}:${port}`,
    events: log.events,
    requestsFor: log.requestsFor,
    heldCount: held.count,
    async close() {
      held.destroyAll();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

interface RequestLog {
  events: EventEmitter<RemoteEvents>;
  /** Files the entry under its key (NO_KEY without one), tells the listeners; returns the key's records. */
  add(key: string | undefined, entry: RequestRecord): RequestRecord[];
  requestsFor(key: string): RequestRecord[];
}

function requestLog(): RequestLog {
  const byKey = new Map<string, RequestRecord[]>();
  const events = new EventEmitter<RemoteEvents>();
  return {
    events,
    add(key, entry) {
      const logKey = key ?? NO_KEY;
      const requests = byKey.get(logKey) ?? [];
      byKey.set(logKey, requests);
      requests.push(entry);
      events.emit("request", logKey, entry);
      return requests;
    },
    requestsFor: (key) => byKey.get(key) ?? [],
  };
}

interface Service {
  handle: Handle;
  maxBodyBytes: number;
  log: RequestLog;
  held: HeldRequests;
}

/** One request: logged as it arrives, its body read, then answered with what the service's handle says. */
async function serve(req: IncomingMessage, res: ServerResponse, { handle, maxBodyBytes, log, held }: Service): Promise<void> {
  const arrivedAt = now();
  const url = new URL(req.url ?? "/", `http://${HOST}`);
  const header = req.headers["idempotency-key"];
  const key = typeof header === "string" ? header : undefined;
  // A server's request always has a method; the fallback only satisfies the type.
  const entry: RequestRecord = { method: req.method ?? "", path: url.pathname, attempt: Number(req.headers["shepherd-attempt"] ?? 0), arrivedAt };
  const requests = log.add(key, entry);

  // The body is read before answering: an answer sent before the request is read can reset the connection.
  let text: string;
  try {
    text = await readBody(req, maxBodyBytes);
  } catch {
    return answer(res, entry, { status: 413, body: { error: "body too large" } });
  }
  const call: FakeRemoteCall = {
    req, res, method: entry.method, path: url.pathname, query: url.searchParams, key, attempt: entry.attempt,
    text, json: parseJson(text), entry, requests,
    hold: (ms) => {
      held.hold(res, ms);
      return undefined;
    },
    pause: (ms) => held.pause(res, ms),
  };
  try {
    answer(res, entry, await handle(call));
  } catch (error) {
    if (!res.headersSent) answer(res, entry, { status: 500, body: { error: String(error) } });
  }
}

function answer(res: ServerResponse, entry: RequestRecord, reply: Reply | undefined): void {
  if (!reply || res.destroyed || res.writableEnded) return;
  entry.status = reply.status;
  res.writeHead(reply.status, { "Content-Type": "application/json", ...reply.headers });
  res.end(JSON.stringify(reply.body));
  entry.respondedAt = now();
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, HOST, resolve);
  });
}

/** An idempotent API's memory of the answers it gave, by Idempotency-Key. */
export interface IdempotencyStore<V> {
  /** { replay, value }: value is apply()'s for a new key, the stored one for a repeated key. */
  once(key: string | undefined, apply: () => V): { replay: boolean; value: V };
  /** The answer stored for a key, if its effect was applied. */
  get(key: string | undefined): V | undefined;
}

/**
 * An idempotent API's memory: the first request with a key applies its effect and stores the answer; a
 * repeated key gets the stored answer back without applying anything. A request without a key applies
 * every time (there is nothing to recognise it by).
 */
export function idempotencyStore<V = unknown>(): IdempotencyStore<V> {
  const answers = new Map<string, V>();
  return {
    once(key, apply) {
      if (key !== undefined && answers.has(key)) return { replay: true, value: answers.get(key) as V };
      const value = apply();
      if (key !== undefined) answers.set(key, value);
      return { replay: false, value };
    },
    get(key) {
      return key === undefined ? undefined : answers.get(key);
    },
  };
}
