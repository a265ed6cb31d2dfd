// A Chrome DevTools Protocol client, just enough for CPU profiles of workerd's isolates. `wrangler dev` opens
// an inspector on --inspector-port that lists one target, a proxy in front of the runtime's inspector for the
// user Worker: its fetch handler, queue consumer and Durable Objects all run in that one isolate. The runtime's
// own inspector (a port of its choosing) lists every isolate of the process: the Worker and the local
// emulations (queue brokers, D1, the entry router, outbound fetch, …). Node's global WebSocket; what the
// runtime pushes on its own (console messages, keep-alive answers) is ignored.
/* global WebSocket, URL, setTimeout, clearTimeout */
import { requestJson } from "../../scripts/lib/http-json.ts";
import { field, isRecord } from "../../scripts/lib/json.ts";
import { asCpuProfile } from "./cpu-profile.ts";
import type { CpuProfile } from "./cpu-profile.ts";

const CONNECT_TIMEOUT_MS = 30_000;
/** Profiler.stop serialises the whole profile inside workerd: on a loaded machine that takes seconds. */
const COMMAND_TIMEOUT_MS = 180_000;

/** An inspector's target: an isolate, by its id (`core:user:<worker>`, `queues:queue:<name>`, `d1:db`, …). */
export interface InspectorTarget {
  id: string;
  webSocketDebuggerUrl: string;
}

const isTarget = (target: unknown): target is InspectorTarget =>
  isRecord(target) && typeof target.webSocketDebuggerUrl === "string" && target.webSocketDebuggerUrl !== "" && typeof target.id === "string";

/** The targets an inspector lists at /json, each with its id and webSocketDebuggerUrl; undefined if it answers no list. */
export async function inspectorTargets(port: number, { timeoutMs = 10_000 }: { timeoutMs?: number } = {}): Promise<InspectorTarget[] | undefined> {
  const { status, body } = await requestJson(`http://127.0.0.1:${port}/json`, { timeoutMs });
  return status === 200 && Array.isArray(body) ? body.filter(isTarget) : undefined;
}

/** An open session with one target. */
export interface InspectorSession {
  /** Resolves to the command's result or rejects with the protocol's error. */
  send(method: string, params?: Record<string, unknown>): Promise<unknown>;
  close(): void;
}

interface Waiter {
  method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** A session with the target at `webSocketUrl`. wrangler's proxy wants a local Origin (and lets one client in at a time). */
export async function connectInspector(webSocketUrl: string): Promise<InspectorSession> {
  const socket = await openSocket(webSocketUrl);
  let nextId = 1;
  const pending = new Map<unknown, Waiter>();
  socket.addEventListener("message", (event) => settle(pending, JSON.parse(typeof event.data === "string" ? event.data : String(event.data))));
  socket.addEventListener("close", () => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${waiter.method}: inspector connection closed`));
    pending.clear();
  });
  return {
    send(method, params = {}) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${method}: no answer within ${COMMAND_TIMEOUT_MS} ms`));
        }, COMMAND_TIMEOUT_MS);
        const done = <T>(fn: (value: T) => void) => (value: T): void => (clearTimeout(timer), fn(value));
        pending.set(id, { method, resolve: done(resolve), reject: done(reject) });
        socket.send(JSON.stringify({ id, method, params }));
      });
    },
    close: () => socket.close(),
  };
}

function openSocket(webSocketUrl: string): Promise<WebSocket> {
  const origin = `http://${new URL(webSocketUrl).host}`;
  const socket = new WebSocket(webSocketUrl, { headers: { Origin: origin } });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`inspector ${webSocketUrl} did not open within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    socket.addEventListener("open", () => (clearTimeout(timer), resolve(socket)), { once: true });
    socket.addEventListener(
      "error",
      (event) => (clearTimeout(timer), reject(new Error(`inspector ${webSocketUrl}: ${field(event, "message") ?? "connection failed"}`))),
      { once: true },
    );
  });
}

/** Answers the command a message is the answer to; a message that answers none (an event) is ignored. */
function settle(pending: Map<unknown, Waiter>, message: unknown): void {
  const id = field(message, "id");
  const waiter = pending.get(id);
  if (!waiter) return;
  pending.delete(id);
  const error = field(message, "error");
  if (error) waiter.reject(new Error(`${waiter.method}: ${field(error, "message") ?? JSON.stringify(error)}`));
  else waiter.resolve(field(message, "result") ?? {});
}

/** A CPU profiler on one isolate; see cpuProfiler. */
export interface CpuProfiler {
  /** Opens the session and enables the profiler (before the measurement, so its cost is not measured). */
  connect(): Promise<void>;
  start(): Promise<unknown>;
  /** Resolves to the profile and closes the session. */
  stop(): Promise<CpuProfile>;
  /** For a run that failed before stop(): leave the isolate unprofiled and the proxy free. */
  abandon(): void;
}

/**
 * A CPU profiler on the isolate behind `webSocketUrl`: connect() opens the session and enables the profiler
 * (before the measurement, so its cost is not measured), start() and stop() bracket the load, stop()
 * resolves to the .cpuprofile object and closes the session.
 */
export function cpuProfiler(webSocketUrl: string, { samplingIntervalUs }: { samplingIntervalUs: number }): CpuProfiler {
  let session: InspectorSession | undefined;
  const connected = (): InspectorSession => {
    if (!session) throw new Error("the profiler is not connected");
    return session;
  };
  return {
    async connect() {
      session = await connectInspector(webSocketUrl);
      await session.send("Profiler.enable");
      await session.send("Profiler.setSamplingInterval", { interval: samplingIntervalUs });
    },
    start: () => connected().send("Profiler.start"),
    async stop() {
      const open = connected();
      try {
        return asCpuProfile(field(await open.send("Profiler.stop"), "profile"), "Profiler.stop's answer");
      } finally {
        await open.send("Profiler.disable").catch(() => undefined);
        open.close();
      }
    },
    abandon() {
      session?.close();
    },
  };
}
