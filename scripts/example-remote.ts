// The remote services of an order workflow, for the README's quickstart (`npm run example-remote`).
// Dependency-free: a Node http server on 127.0.0.1:8788 (override with PORT) that logs every request.
//
//   POST /reserve  200 {reservationId}        POST /refund   200 {refunded: true}
//   POST /charge   200 {chargeId}             POST /release  200 {released: true}
//   POST /ship     200 {trackingId}           POST /flaky    503 twice per Idempotency-Key, then 200
//   POST /decline  422 {error}                POST /async    202, then reports through its task token
//   POST /render   202; the first job per key heartbeats "47 %" for ever (a stuck job), later ones finish
//   POST /pay      charges once per key; the first request's answer is lost (held, never answered)
//   GET  /pay      the charge made under the request's Idempotency-Key, or 404 (what `verify` asks)
//   POST /unavailable  503 every time           POST /hooks    logs a webhook delivery, 200
//   POST /thumbnail  200 {thumbnail} for the body's src
//   GET  /effects  effects applied, per Idempotency-Key
//
// /charge is idempotent like a real payment API: the same key returns the same charge and is applied once.
// The other endpoints apply every successful request, so an effect count above 1 reveals a duplicate.
// /async calls back only SHEPHERD_URL (default http://localhost:8787), which must be on this machine.
// The HTTP server itself (127.0.0.1, bodies, the per-key request log, JSON answers, the stored charge per
// key, closing) is the shared fake remote's (scripts/lib/fake-remote.ts); the endpoints are this file's.
/* global fetch, AbortSignal */
import type { IncomingMessage } from "node:http";
import { setTimeout } from "node:timers";
import { HOST, idempotencyStore, startFakeRemote } from "./lib/fake-remote.ts";
import type { FakeRemoteCall, Reply } from "./lib/fake-remote.ts";
import { errorMessage, field } from "./lib/json.ts";

const PORT = Number(process.env.PORT ?? 8788);
const SHEPHERD_URL = new URL(process.env.SHEPHERD_URL ?? "http://localhost:8787");
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
/** Async jobs in flight at once; more are refused with 429 so callbacks stay bounded. */
const MAX_PENDING_CALLBACKS = 100;
const CALLBACK_DELAY_MS = 1000;
const CALLBACK_TIMEOUT_MS = 5000;
/** A stuck job gives up heartbeating after this many (a minute), should nobody stop it. */
const STUCK_HEARTBEATS = 60;
const LOST_ANSWER_HOLD_MS = 30_000;

if (!Number.isInteger(PORT) || PORT < 1 || PORT > 65535) {
  console.error(`PORT must be a port number (got ${process.env.PORT})`);
  process.exit(1);
}
if (!LOCAL_HOSTS.has(SHEPHERD_URL.hostname) || !["http:", "https:"].includes(SHEPHERD_URL.protocol)) {
  console.error(`SHEPHERD_URL must be an http URL on localhost (got ${SHEPHERD_URL})`);
  process.exit(1);
}

interface Charge {
  chargeId: string;
  amount: unknown;
}

/** Effects applied per Idempotency-Key, served by GET /effects. */
const effects = new Map<string, number>();
/** The charge made for each Idempotency-Key, so a repeated request gets the same one back. */
const charges = idempotencyStore<Charge>();
/** Per-prefix counters for the ids the endpoints hand out (res_0001, ch_0001, ...). */
const sequences = new Map<string, number>();
let pendingCallbacks = 0;

function applyEffect(key: string = "(no key)"): void {
  effects.set(key, (effects.get(key) ?? 0) + 1);
}

function nextId(prefix: string): string {
  const n = (sequences.get(prefix) ?? 0) + 1;
  sequences.set(prefix, n);
  return `${prefix}_${String(n).padStart(4, "0")}`;
}

/** What an endpoint gets: the request's key, body, and how many requests this key made to this path. */
interface EndpointCall {
  key: string | undefined;
  body: unknown;
  /** Requests with this key to this path so far, this one included. */
  seen: number;
  req: IncomingMessage;
  json: unknown;
  token: string | undefined;
  hold: (ms?: number) => undefined;
}

/** [status, body], or undefined when the request is held and answered nothing. */
type EndpointReply = [status: number, body: unknown] | undefined;

const handlers: Record<string, (call: EndpointCall) => EndpointReply> = {
  "POST /reserve": ({ key }) => {
    applyEffect(key);
    return [200, { reservationId: nextId("res") }];
  },
  "POST /charge": ({ key, body }) => {
    const { value: charge } = charges.once(key, () => {
      applyEffect(key);
      return { chargeId: nextId("ch"), amount: field(body, "amount") ?? null };
    });
    return [200, charge];
  },
  "POST /ship": ({ key }) => {
    applyEffect(key);
    return [200, { trackingId: nextId("trk") }];
  },
  "POST /thumbnail": ({ key, body }) => {
    applyEffect(key);
    return [200, { thumbnail: `${String(field(body, "src") ?? "image")}.thumb.png` }];
  },
  "POST /refund": ({ key }) => {
    applyEffect(key);
    return [200, { refunded: true }];
  },
  "POST /release": ({ key }) => {
    applyEffect(key);
    return [200, { released: true }];
  },
  "POST /flaky": ({ key, seen }) => {
    if (seen <= 2) return [503, { error: `temporarily unavailable (request ${seen} for this key)` }];
    applyEffect(key);
    return [200, { ok: true, requests: seen }];
  },
  "POST /decline": () => [422, { error: "declined" }],
  "POST /async": ({ key, token }) => {
    if (!token) return [400, { error: "missing Shepherd-Task-Token header" }];
    if (pendingCallbacks >= MAX_PENDING_CALLBACKS) return [429, { error: "too many jobs in flight" }];
    const jobId = nextId("job");
    pendingCallbacks += 1;
    setTimeout(() => {
      reportJob(token, key, jobId).finally(() => {
        pendingCallbacks -= 1;
      });
    }, CALLBACK_DELAY_MS);
    return [202, { accepted: true, jobId }];
  },
  "POST /render": ({ key, token, seen }) => {
    if (!token) return [400, { error: "missing Shepherd-Task-Token header" }];
    const jobId = nextId("job");
    renderJob(token, key, jobId, { stuck: seen === 1 });
    return [202, { accepted: true, jobId }];
  },
  "POST /pay": ({ key, body, seen, hold }) => {
    const { value: charge } = charges.once(key, () => {
      applyEffect(key);
      return { chargeId: nextId("ch"), amount: field(body, "amount") ?? null };
    });
    // The charge is made, but the answer never arrives: the caller cannot tell whether it landed.
    if (seen === 1) return hold(LOST_ANSWER_HOLD_MS);
    return [200, charge];
  },
  "GET /pay": ({ key }) => {
    const charge = charges.get(key);
    return charge ? [200, charge] : [404, { error: `no charge under ${key}` }];
  },
  "POST /unavailable": () => [503, { error: "down for maintenance" }],
  "POST /hooks": ({ req, json }) => {
    console.log(`  webhook ${req.headers["webhook-id"]} ${field(json, "type")} signed=${Boolean(req.headers["webhook-signature"])}`);
    return [200, { received: true }];
  },
  "GET /effects": () => [200, Object.fromEntries(effects)],
};

/** A job stuck "at 47 %" heartbeats for ever (until Shepherd says stop); a healthy one moves on and finishes. */
async function renderJob(token: string, key: string | undefined, jobId: string, { stuck }: { stuck: boolean }): Promise<void> {
  pendingCallbacks += 1;
  try {
    for (let beat = 1; beat <= (stuck ? STUCK_HEARTBEATS : 2); beat += 1) {
      await new Promise((resolve) => setTimeout(resolve, CALLBACK_DELAY_MS));
      const reply = await callShepherd(token, "heartbeat", { progress: { jobId, percent: stuck ? 47 : 50 * beat } });
      if (!reply || field(reply, "cancelRequested")) return;
    }
    if (stuck) return;
    if (await callShepherd(token, "complete", { output: { jobId, frames: 120 } })) applyEffect(key);
  } finally {
    pendingCallbacks -= 1;
  }
}

/** Plays a slow job: one heartbeat with progress, then completion, both through the task token. */
async function reportJob(token: string, key: string | undefined, jobId: string): Promise<void> {
  const heartbeat = await callShepherd(token, "heartbeat", { progress: { jobId, percent: 50 } });
  if (field(heartbeat, "cancelRequested")) {
    console.log(`  job ${jobId}: Shepherd asked to cancel; not completing`);
    return;
  }
  const completed = await callShepherd(token, "complete", { output: { jobId, labelUrl: `https://labels.example/${jobId}.pdf` } });
  if (completed) applyEffect(key);
}

/** A task-token callback; resolves to Shepherd's answer when it is a success, else undefined. */
async function callShepherd(token: string, action: string, body: unknown): Promise<unknown> {
  const url = new URL(`/v1/tasks/${encodeURIComponent(token)}/${action}`, SHEPHERD_URL);
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
    });
    const text = await response.text();
    console.log(`  -> POST ${url.origin}/v1/tasks/<token>/${action} ${response.status} ${text}`);
    return response.ok ? (JSON.parse(text) as unknown) : undefined;
  } catch (error) {
    console.log(`  -> POST ${url.origin}/v1/tasks/<token>/${action} failed: ${errorMessage(error)}`);
    return undefined;
  }
}

/** Answers one request from the table above and logs it with what it answered. */
function answer(call: FakeRemoteCall): Reply | undefined {
  const { method, path, key, text, json, req } = call;
  const handler = handlers[`${method} ${path}`];
  // /flaky counts per key and path, so a key used elsewhere first does not use up its failures.
  const seen = call.requests.filter((entry) => entry.path === path).length;
  const reply: EndpointReply = handler
    ? handler({ key, body: json, seen, req, json, token: header(req, "shepherd-task-token"), hold: (ms) => call.hold(ms) })
    : Object.keys(handlers).some((route) => route.endsWith(` ${path}`))
      ? [405, { error: `method ${method} not allowed on ${path}` }]
      : [404, { error: `no endpoint ${path}` }];
  if (!reply) {
    console.log(`${method} ${path} Idempotency-Key=${key ?? "-"} Shepherd-Attempt=${req.headers["shepherd-attempt"] ?? "-"} ${text.trim().slice(0, 200) || "-"} -> (no answer: held)`);
    return undefined;
  }
  const [status, body] = reply;
  console.log(
    `${method} ${path} Idempotency-Key=${key ?? "-"} Shepherd-Attempt=${req.headers["shepherd-attempt"] ?? "-"} ${text.trim().slice(0, 200) || "-"} -> ${status} ${JSON.stringify(body)}`,
  );
  return { status, body };
}

/** A request header as one string (Node joins a repeated one). */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

const remote = await startFakeRemote({ port: PORT, handle: answer });
console.log(`example remote listening on http://${HOST}:${PORT} (callbacks to ${SHEPHERD_URL.origin})`);

function shutdown(): void {
  remote.close().finally(() => process.exit(0));
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
