// The HTTP server under the project's fake remote services: the quickstart's (scripts/example-remote.ts),
// the bench's (bench/lib/remote.ts) and the chaos soak's (chaos/remote.ts). It listens on 127.0.0.1 only,
// reads each request's body (bounded), logs every request per Idempotency-Key with when it arrived and when
// it was answered, answers JSON, can hold a request open (a hang) or answer late (a slow remote), and
// closes gracefully, held sockets included. What each path does is the service's own `handle`.
//
// Not shared with test/helpers/remote.ts: that one is no server but a `fetch` spy inside the Workers
// runtime, answering from the test's handler; all it has in common with this is a count per key, three
// lines not worth an import from the test suite into the tools' Node code.
/* global setTimeout, clearTimeout, Buffer */
import { EventEmitter } from "node:events";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";

export const HOST = "127.0.0.1";
/** Wall-clock milliseconds with sub-millisecond resolution, comparable with Date.now() in the engines. */
export const now = () => performance.timeOrigin + performance.now();
/** Where the request log files a request that carries no Idempotency-Key. */
export const NO_KEY = "(none)";
const MAX_BODY_BYTES = 1024 * 1024;
/**
 * Idle keep-alive connections are kept this long (Node's default is 5 s): the engines' connection pools
 * reuse them, and a server closing an idle socket just as a caller reuses it resets that request.
 */
const KEEP_ALIVE_MS = 30_000;

/**
 * Starts a fake remote on 127.0.0.1:port. For every request, once its body is read, `handle(call)` returns
 * the answer { status, body, headers? } (sent as JSON), or undefined when it answers nothing (it held
 * the request). `call` has: req, res, method, path, query (URLSearchParams), key (the Idempotency-Key or
 * undefined), attempt (Shepherd-Attempt as a number, 0 without one), text and json (the body), entry (this
 * request's record in the log, to add to), requests (the key's records so far, this one last),
 * hold(ms?) (keep the request open until the caller closes it, or ms at most; returns undefined, so
 * `return call.hold()` answers nothing) and pause(ms) (wait ms while holding it; false when the caller
 * closed it meanwhile).
 *
 * Resolves once listening with { url, events, requestsFor(key), heldCount(), close() }: `events` emits
 * "request" (key, entry) as each request arrives; requestsFor(key) is the key's log, in arrival order, of
 * { method, path, attempt, arrivedAt, status?, respondedAt? }; close() ends every held request and stops.
 */
export async function startFakeRemote({ port, handle, maxBodyBytes = MAX_BODY_BYTES }) {
  const log = new Map();
  const events = new EventEmitter();
  /** Requests held open by hold() and pause(), destroyed at close so the server can stop. */
  const held = new Set();

  function answer(res, entry, reply) {
    if (!reply || res.destroyed || res.writableEnded) return;
    entry.status = reply.status;
    res.writeHead(reply.status, { "Content-Type": "application/json", ...reply.headers });
    res.end(JSON.stringify(reply.body));
    entry.respondedAt = now();
  }

  function hold(res, ms) {
    held.add(res);
    const timer = ms === undefined ? undefined : setTimeout(() => res.destroy(), ms);
    res.once("close", () => {
      clearTimeout(timer);
      held.delete(res);
    });
  }

  function pause(res, ms) {
    held.add(res);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        res.off("close", closed);
        held.delete(res);
        resolve(!res.destroyed);
      }, ms);
      const closed = () => {
        clearTimeout(timer);
        held.delete(res);
        resolve(false);
      };
      res.once("close", closed);
    });
  }

  const server = createServer(async (req, res) => {
    const arrivedAt = now();
    const url = new URL(req.url ?? "/", `http://${HOST}`);
    const key = typeof req.headers["idempotency-key"] === "string" ? req.headers["idempotency-key"] : undefined;
    const entry = { method: req.method, path: url.pathname, attempt: Number(req.headers["shepherd-attempt"] ?? 0), arrivedAt };
    const logKey = key ?? NO_KEY;
    if (!log.has(logKey)) log.set(logKey, []);
    const requests = log.get(logKey);
    requests.push(entry);
    events.emit("request", logKey, entry);

    // The body is read before answering: an answer sent before the request is read can reset the connection.
    let text;
    try {
      text = await readBody(req, maxBodyBytes);
    } catch {
      return answer(res, entry, { status: 413, body: { error: "body too large" } });
    }
    const call = {
      req, res, method: req.method, path: url.pathname, query: url.searchParams, key, attempt: entry.attempt,
      text, json: parseJson(text), entry, requests,
      hold: (ms) => hold(res, ms),
      pause: (ms) => pause(res, ms),
    };
    try {
      answer(res, entry, await handle(call));
    } catch (error) {
      if (!res.headersSent) answer(res, entry, { status: 500, body: { error: String(error) } });
    }
  });
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, HOST, resolve);
  });

  return {
    url: `http://${HOST}:${port}`,
    events,
    requestsFor: (key) => log.get(key) ?? [],
    heldCount: () => held.size,
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * An idempotent API's memory: the first request with a key applies its effect and stores the answer; a
 * repeated key gets the stored answer back without applying anything. A request without a key applies
 * every time (there is nothing to recognise it by).
 */
export function idempotencyStore() {
  const answers = new Map();
  return {
    /** { replay, value }: value is apply()'s for a new key, the stored one for a repeated key. */
    once(key, apply) {
      if (key !== undefined && answers.has(key)) return { replay: true, value: answers.get(key) };
      const value = apply();
      if (key !== undefined) answers.set(key, value);
      return { replay: false, value };
    },
    /** The answer stored for a key, if its effect was applied. */
    get(key) {
      return key === undefined ? undefined : answers.get(key);
    },
  };
}

function readBody(req, maxBytes) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new Error("body too large"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseJson(text) {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
