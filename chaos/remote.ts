// The chaos soak's remote service: an idempotent HTTP API on 127.0.0.1 that misbehaves on purpose.
//
//   POST /act/{step}         the step's action        POST /compensate/{step}  its compensation
//   POST /stall/{step}       202, then a job on the task token: the first attempt stuck, later ones complete
//   POST /lost/{step}        applies the effect; the first request's answer is lost (body.lose: reset or hang)
//   GET  /effects/{key}      the effect of that key (200 with its body) or 404: a step's `verify`
//   GET  /stats              counters, per Idempotency-Key and per logical operation (JSON)
//   GET  /healthz            {ok: true}
//
// Per request it answers at once, answers slowly, hangs until the caller closes the socket, answers 503 or
// 429 (Retry-After: 1), declines with 422, or applies the effect and then hangs past the step's timeout
// (Temporal's ExecuteAndTimeout). The choice comes from lib/faults.ts: deterministic per
// (seed, Idempotency-Key, attempt), and only on a key's first attempts so workflows can finish.
//
// Like a real idempotent API it applies an effect once per key and answers a repeated key with the stored
// response. It still counts every request that would have applied again ("replays"), so duplicates stay
// visible, and it counts effects per logical operation (workflow, step, action|compensation taken from the
// Shepherd-* headers and the path) so an engine that varied the key between attempts would show up too.
//
// The same code serves the breaker scenario's second host, without faults: `armOutage(ms)` makes it answer
// every operation 503 for that long from the next request on.
//
// Standalone: node chaos/remote.ts --port 8812 --seed 1
//
// The HTTP side (127.0.0.1, bodies, held sockets, the stored answer per key, closing) is the shared fake
// remote's (scripts/lib/fake-remote.ts); the fault plan and the bookkeeping the checks read are the soak's.
/* global process, console */
import { pathToFileURL } from "node:url";
import { idempotencyStore, startFakeRemote } from "../scripts/lib/fake-remote.ts";
import { DEFAULT_REMOTE_FAULTS, isDeclined, transientFault, unitHash } from "./lib/faults.ts";
import { DEFAULT_LOST_MODE, LOST_MODES } from "./lib/lost-answers.ts";
import { MOVING_BEAT_MS, MOVING_PERCENTS, REMOTE_BEAT_MS, stuckProgress } from "./lib/stall.ts";
import { runMovingJob, runStuckJob } from "./lib/task-callbacks.ts";

const SLOW_MIN_MS = 300;
const SLOW_MAX_MS = 1200;
/** A hang lasts until the caller gives up; this cap only keeps a forgotten socket from living forever. */
const HANG_CAP_MS = 60_000;
const MAX_BODY_BYTES = 256 * 1024;
/** Outcomes that are the remote doing its job, not a fault it injected. */
const ANSWERS = new Set(["ok", "replay", "accepted"]);

/**
 * Starts the remote service. Resolves once it listens; `stats()` is the same JSON as GET /stats and
 * `close()` ends every held socket. `neverDecline(key)` exempts keys from the 422 (the cron schedule's
 * workflows, whose ids depend on the clock and so cannot be predicted); their transient faults stay.
 * `shepherdUrl` is where the jobs behind a 202 send their heartbeats and completions.
 */
export async function startRemote({ port, seed, faults = DEFAULT_REMOTE_FAULTS, neverDecline = () => false, shepherdUrl = null, log = () => {} }) {
  const keys = new Map();
  const ops = new Map();
  const answers = idempotencyStore();
  /** Key in the path of GET /effects → every verify call for it: {at, attempt, keyHeader, found}. */
  const verifies = new Map();
  const outages = [];
  /** An outage that begins with the next operation request (armOutage). */
  let armed = null;
  const startedAt = Date.now();
  let effectSeq = 0;
  let unkeyed = 0;
  let closing = false;
  let server;

  function recordFor(key, kind, workflowId, stepId, pathStep) {
    let record = keys.get(key);
    if (!record) {
      const expected = kind === "action" ? `${workflowId}:${stepId}` : `${workflowId}:${stepId}:compensate`;
      record = {
        key, kind, workflowId, stepId,
        // The key Shepherd must send for this operation (the contract: <workflowId>:<stepId>[:compensate]; see README, "What a remote service receives").
        wellFormed: key === expected && stepId === pathStep,
        requests: 0, attempts: [], applied: 0, replays: 0, replaysAfterDelivered: 0, abandoned: 0,
        faults: {}, delivered: false, appliedAt: null, appliedBody: null, log: [],
        // The jobs behind /stall's 202s, and how /lost lost its first answer.
        jobs: [], lost: null,
      };
      keys.set(key, record);
    }
    return record;
  }

  /** Applies the effect once per key; a repeated key gets the stored response (counted as a replay). */
  function applyOrReplay(record) {
    const { replay, value } = answers.once(record.key, () => {
      effectSeq += 1;
      record.applied += 1;
      record.appliedAt = Date.now();
      const op = `${record.workflowId}|${record.stepId}|${record.kind}`;
      ops.set(op, (ops.get(op) ?? 0) + 1);
      record.appliedBody = record.kind === "action" ? { effectId: `eff_${String(effectSeq).padStart(5, "0")}`, step: record.stepId } : { compensated: true, step: record.stepId };
      return record.appliedBody;
    });
    if (replay) {
      record.replays += 1;
      if (record.delivered) record.replaysAfterDelivered += 1;
    }
    return { replay, body: value };
  }

  async function operation(call, route, pathStep) {
    const kind = route === "compensate" ? "compensation" : "action";
    const { key, attempt, req } = call;
    if (key === undefined || key === "") {
      unkeyed += 1;
      return { status: 400, body: { error: "missing Idempotency-Key" } };
    }
    const workflowId = String(req.headers["shepherd-workflow-id"] ?? "");
    const stepId = String(req.headers["shepherd-step-id"] ?? "");
    const record = recordFor(key, kind, workflowId, stepId, pathStep);
    record.requests += 1;
    if (!record.attempts.includes(attempt)) record.attempts.push(attempt);
    const ordinal = record.attempts.indexOf(attempt) + 1;

    // Every request is logged; only injected faults are counted as faults (a replay is the remote's answer).
    const note = (outcome) => {
      record.log.push({ attempt, outcome, at: Date.now() });
      if (!ANSWERS.has(outcome)) record.faults[outcome] = (record.faults[outcome] ?? 0) + 1;
      log(`${req.method} ${req.url} key=${key} attempt=${attempt} -> ${outcome}`);
    };

    if (armed) {
      Object.assign(armed, { from: Date.now(), to: Date.now() + armed.ms });
      outages.push(armed);
      armed = null;
    }
    if (outages.some((o) => o.from <= Date.now() && Date.now() < o.to)) {
      note("outage503");
      return { status: 503, body: { error: "host down" } };
    }
    if (route === "stall") return acceptStalling(call, record, ordinal, note);
    if (route === "lost") return loseFirstAnswer(call, record, note);
    if (kind === "action" && !neverDecline(key) && isDeclined(seed, key, faults)) {
      note("http422");
      return { status: 422, body: { error: "declined" } };
    }
    const fault = transientFault(seed, key, attempt, ordinal, faults);
    switch (fault) {
      case "http503":
        note(fault);
        return { status: 503, body: { error: "temporarily unavailable" } };
      case "http429":
        note(fault);
        return { status: 429, body: { error: "slow down" }, headers: { "Retry-After": "1" } };
      case "hang":
        note(fault);
        return call.hold(HANG_CAP_MS);
      case "slow": {
        note(fault);
        const delay = SLOW_MIN_MS + Math.floor(unitHash(seed, key, attempt, "delay") * (SLOW_MAX_MS - SLOW_MIN_MS));
        // A caller that gave up meanwhile (aborted, fenced) never gets the effect applied.
        if (!(await call.pause(delay))) {
          record.abandoned += 1;
          return undefined;
        }
        break;
      }
      default:
        break;
    }
    const { replay, body } = applyOrReplay(record);
    if (fault === "executeAndTimeout") {
      // The effect is applied; the caller is never told and must retry with the same key.
      note(fault);
      return call.hold(HANG_CAP_MS);
    }
    if (fault !== "slow") note(replay ? "replay" : "ok");
    return delivered(call, record, body);
  }

  function delivered(call, record, body) {
    call.res.on("finish", () => {
      record.delivered = true;
    });
    return { status: 200, body };
  }

  /** 202, then a job reports through the token: the key's first attempt here stays stuck, later ones finish. */
  function acceptStalling(call, record, ordinal, note) {
    const stuck = ordinal === 1;
    const job = { attempt: call.attempt, stuck, acceptedAt: Date.now(), heartbeats: [], completions: [], ended: null };
    record.jobs.push(job);
    note(stuck ? "stuck" : "accepted");
    const ctx = { shepherdUrl, token: String(call.req.headers["shepherd-task-token"] ?? ""), job, closed: () => closing };
    if (stuck) runStuckJob({ ...ctx, progress: stuckProgress(seed, record.key), everyMs: REMOTE_BEAT_MS });
    else runMovingJob({ ...ctx, percents: MOVING_PERCENTS, everyMs: MOVING_BEAT_MS, finish: () => applyOrReplay(record).body });
    return { status: 202, body: { accepted: true } };
  }

  /** The key's first request applies the effect and loses the answer; any later one is answered (a replay). */
  function loseFirstAnswer(call, record, note) {
    const { replay, body } = applyOrReplay(record);
    if (record.requests > 1) {
      note(replay ? "replay" : "ok");
      return delivered(call, record, body);
    }
    // The workflow's definition says how (lib/lost-answers.ts deals the modes from the seed).
    const mode = LOST_MODES.includes(call.json?.lose) ? call.json.lose : DEFAULT_LOST_MODE;
    record.lost = { mode, attempt: call.attempt, at: Date.now() };
    note(`lost-${mode}`);
    if (mode === "hang") return call.hold(HANG_CAP_MS);
    call.req.socket.destroy();
    return undefined;
  }

  /** A step's `verify`: the effect of the key in the path, if it was applied. */
  function verifyEffect(call, pathKey) {
    const record = keys.get(pathKey);
    const found = (record?.applied ?? 0) > 0;
    if (!verifies.has(pathKey)) verifies.set(pathKey, []);
    verifies.get(pathKey).push({ at: Date.now(), attempt: call.attempt, keyHeader: call.key ?? null, found });
    // In the key's own log too, so a failed check's timeline shows the verify between the attempts.
    record?.log.push({ attempt: call.attempt, outcome: `verify ${found ? 200 : 404}`, at: Date.now() });
    log(`GET ${call.path} key=${call.key} attempt=${call.attempt} -> ${found ? 200 : 404}`);
    return found ? { status: 200, body: record.appliedBody } : { status: 404, body: { error: "no effect with this key" } };
  }

  function stats() {
    const totals = { action: emptyTotals(), compensation: emptyTotals() };
    for (const record of keys.values()) {
      const t = totals[record.kind];
      t.keys += 1;
      t.requests += record.requests;
      t.applied += record.applied;
      t.replays += record.replays;
      t.replaysAfterDelivered += record.replaysAfterDelivered;
      t.abandoned += record.abandoned;
      if (!record.wellFormed) t.malformedKeys += 1;
      for (const [kind, n] of Object.entries(record.faults)) t.faults[kind] = (t.faults[kind] ?? 0) + n;
    }
    return {
      seed,
      faults,
      uptimeMs: Date.now() - startedAt,
      unkeyedRequests: unkeyed,
      heldSockets: server.heldCount(),
      totals,
      keys: Object.fromEntries([...keys].map(([key, r]) => [key, { ...r }])),
      ops: Object.fromEntries(ops),
      verifies: Object.fromEntries(verifies),
      outages: [...outages],
    };
  }

  server = await startFakeRemote({
    port,
    maxBodyBytes: MAX_BODY_BYTES,
    handle(call) {
      const match = /^\/(act|compensate|stall|lost)\/([A-Za-z0-9_.:-]+)$/.exec(call.path);
      if (call.method === "POST" && match) return operation(call, match[1], match[2]);
      const effect = /^\/effects\/([A-Za-z0-9_.:%-]+)$/.exec(call.path);
      if (call.method === "GET" && effect) return verifyEffect(call, decodeURIComponent(effect[1]));
      if (call.method === "GET" && call.path === "/stats") return { status: 200, body: stats() };
      if (call.method === "GET" && call.path === "/healthz") return { status: 200, body: { ok: true } };
      return { status: 404, body: { error: "not found" } };
    },
  });
  return {
    url: server.url,
    stats,
    /**
     * Every operation answers 503 for `ms` from the next one on. Returns the outage, whose {from, to} are
     * filled in (null until then) when that request comes.
     */
    armOutage(ms) {
      armed = { ms, armedAt: Date.now(), from: null, to: null };
      return armed;
    },
    close() {
      closing = true;
      return server.close();
    },
  };
}

function emptyTotals() {
  return { keys: 0, requests: 0, applied: 0, replays: 0, replaysAfterDelivered: 0, abandoned: 0, malformedKeys: 0, faults: {} };
}

// Standalone use, for poking at the fault plan by hand.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(name);
    return i === -1 ? fallback : process.argv[i + 1];
  };
  const remote = await startRemote({ port: Number(arg("--port", 8812)), seed: String(arg("--seed", "1")), log: console.log });
  console.log(`chaos remote on ${remote.url} (GET /stats)`);
  const stop = () => remote.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
