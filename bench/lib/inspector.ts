// A Chrome DevTools Protocol client, just enough for CPU profiles of workerd's isolates. `wrangler dev` opens
// an inspector on --inspector-port that lists one target, a proxy in front of the runtime's inspector for the
// user Worker: its fetch handler, queue consumer and Durable Objects all run in that one isolate. The runtime's
// own inspector (a port of its choosing) lists every isolate of the process: the Worker and the local
// emulations (queue brokers, D1, the entry router, outbound fetch, …). Node's global WebSocket; what the
// runtime pushes on its own (console messages, keep-alive answers) is ignored.
/* global WebSocket, URL, setTimeout, clearTimeout */
import { requestJson } from "../../scripts/lib/http-json.ts";

const CONNECT_TIMEOUT_MS = 30_000;
/** Profiler.stop serialises the whole profile inside workerd: on a loaded machine that takes seconds. */
const COMMAND_TIMEOUT_MS = 180_000;

/** The targets an inspector lists at /json, each with its id and webSocketDebuggerUrl; undefined if it answers no list. */
export async function inspectorTargets(port, { timeoutMs = 10_000 } = {}) {
  const { status, body } = await requestJson(`http://127.0.0.1:${port}/json`, { timeoutMs });
  return status === 200 && Array.isArray(body) ? body.filter((target) => target.webSocketDebuggerUrl) : undefined;
}

/**
 * An open session with one target: send(method, params) resolves to the command's result or rejects with
 * the protocol's error; close() ends it. wrangler's proxy wants a local Origin (and lets one client in at a time).
 */
export async function connectInspector(webSocketUrl) {
  const origin = `http://${new URL(webSocketUrl).host}`;
  const socket = new WebSocket(webSocketUrl, { headers: { Origin: origin } });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`inspector ${webSocketUrl} did not open within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    socket.addEventListener("open", () => (clearTimeout(timer), resolve()), { once: true });
    socket.addEventListener("error", (event) => (clearTimeout(timer), reject(new Error(`inspector ${webSocketUrl}: ${event.message ?? "connection failed"}`))), { once: true });
  });

  let nextId = 1;
  const pending = new Map();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(typeof event.data === "string" ? event.data : String(event.data));
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(`${waiter.method}: ${message.error.message ?? JSON.stringify(message.error)}`));
    else waiter.resolve(message.result ?? {});
  });
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
        const settle = (fn) => (value) => (clearTimeout(timer), fn(value));
        pending.set(id, { method, resolve: settle(resolve), reject: settle(reject) });
        socket.send(JSON.stringify({ id, method, params }));
      });
    },
    close: () => socket.close(),
  };
}

/**
 * A CPU profiler on the isolate behind `webSocketUrl`: connect() opens the session and enables the profiler
 * (before the measurement, so its cost is not measured), start() and stop() bracket the load, stop()
 * resolves to the .cpuprofile object and closes the session.
 */
export function cpuProfiler(webSocketUrl, { samplingIntervalUs }) {
  let session;
  return {
    async connect() {
      session = await connectInspector(webSocketUrl);
      await session.send("Profiler.enable");
      await session.send("Profiler.setSamplingInterval", { interval: samplingIntervalUs });
    },
    start: () => session.send("Profiler.start"),
    async stop() {
      try {
        const { profile } = await session.send("Profiler.stop");
        return profile;
      } finally {
        await session.send("Profiler.disable").catch(() => undefined);
        session.close();
      }
    },
    /** For a run that failed before stop(): leave the isolate unprofiled and the proxy free. */
    abandon() {
      session?.close();
    },
  };
}
