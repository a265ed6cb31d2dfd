// The "remote service" both engines call: an HTTP server on 127.0.0.1 that answers at once unless the
// path asks for something else, and records when every request arrived and when it was answered.
// It runs inside the bench process so the arrival times share the harness's clock exactly.
//
//   /ok             200 {ok: true}
//   /fail-once      503 the first time per Idempotency-Key, 200 after (the retry case)
//   /slow?ms=N      200 after N ms (default 5000; the mixed-load case)
//   /hang           never answers (the request stays open until the caller gives up)
//   /hang-once      never answers the first time per Idempotency-Key, 200 after (the detection case)
//   /accept         202 {accepted: true}: the work continues elsewhere (the idle-supervisor case)
/* global setTimeout, clearTimeout, URL */
import { EventEmitter } from "node:events";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";

/** Wall-clock milliseconds with sub-millisecond resolution, comparable with Date.now() in the engines. */
export const now = () => performance.timeOrigin + performance.now();

export async function startRemote(port, host = "127.0.0.1") {
  /** Idempotency-Key -> [{ path, attempt, arrivedAt, respondedAt?, status? }], in arrival order. */
  const requests = new Map();
  const events = new EventEmitter();
  /** Responses held open by /hang and /slow, closed at shutdown so the server can stop. */
  const held = new Set();

  const server = createServer((req, res) => {
    const arrivedAt = now();
    const url = new URL(req.url ?? "/", "http://remote");
    const key = req.headers["idempotency-key"] ?? "(none)";
    const record = { path: url.pathname, attempt: Number(req.headers["shepherd-attempt"] ?? 0), arrivedAt };
    if (!requests.has(key)) requests.set(key, []);
    const seen = requests.get(key);
    seen.push(record);
    events.emit("request", key, record);

    const answer = (status, body) => {
      if (res.writableEnded || res.destroyed) return;
      record.status = status;
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
      record.respondedAt = now();
    };
    // Drain the body first: answering before the request is read can reset the connection.
    req.resume();
    req.on("end", () => {
      switch (url.pathname) {
        case "/ok":
          return answer(200, { ok: true });
        case "/fail-once":
          return seen.length === 1 ? answer(503, { error: "try again" }) : answer(200, { ok: true, retried: true });
        case "/slow": {
          const timer = setTimeout(() => {
            held.delete(res);
            answer(200, { ok: true, slow: true });
          }, Number(url.searchParams.get("ms") ?? 5000));
          held.add(res);
          res.on("close", () => {
            clearTimeout(timer);
            held.delete(res);
          });
          return;
        }
        case "/hang":
          held.add(res);
          res.on("close", () => held.delete(res));
          return;
        case "/hang-once":
          if (seen.length > 1) return answer(200, { ok: true, retried: true });
          held.add(res);
          res.on("close", () => held.delete(res));
          return;
        case "/accept":
          return answer(202, { accepted: true });
        default:
          return answer(404, { error: `no route ${url.pathname}` });
      }
    });
  });
  server.keepAliveTimeout = 30_000;

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });

  return {
    url: `http://${host}:${port}`,
    events,
    /** The requests seen for one Idempotency-Key, in arrival order. */
    requestsFor: (key) => requests.get(key) ?? [],
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
