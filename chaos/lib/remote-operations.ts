// What the soak's remote does with each operation request (chaos/remote.ts routes them here): per request it
// answers at once, answers slowly, hangs until the caller closes the socket, answers 503 or 429 (Retry-After: 1),
// declines with 422, or applies the effect and then hangs past the step's timeout (Temporal's ExecuteAndTimeout).
// The choice comes from faults.ts: deterministic per (seed, Idempotency-Key, attempt), and only on a key's first
// attempts so workflows can finish. /stall answers 202 and reports through the task token; /lost loses the
// first answer; GET /effects/{key} is a step's verify. /item/{mapStepId} is a map's item: only case 27's faults, once
// per key (a 503 or a hang on its first attempt), and an effect that echoes the item's index and item. /worker/{step} is
// the pool phase's workers applying a task's effect under its idempotencyKey: no faults (theirs are the workers' deaths
// and the restart), once per key.
import type { IncomingMessage, ServerResponse } from "node:http";
import { field } from "./api-shapes.ts";
import { isDeclined, itemFault, transientFault, unitHash } from "./faults.ts";
import type { RemoteFaults, TransientFault } from "./faults.ts";
import { DEFAULT_LOST_MODE, isLostMode } from "./lost-answers.ts";
import { applyOrReplay, hostDown, recordFor } from "./remote-ledger.ts";
import type { EffectBody, ItemCall, KeyRecord, Ledger } from "./remote-ledger.ts";
import { MOVING_BEAT_MS, MOVING_PERCENTS, REMOTE_BEAT_MS, stuckProgress } from "./stall.ts";
import { runMovingJob, runStuckJob } from "./task-callbacks.ts";
import type { Job } from "./task-callbacks.ts";

const SLOW_MIN_MS = 300;
const SLOW_MAX_MS = 1200;
/** A hang lasts until the caller gives up; this cap only keeps a forgotten socket from living forever. */
export const HANG_CAP_MS = 60_000;
/** Outcomes that are the remote doing its job, not a fault it injected. */
const ANSWERS: ReadonlySet<string> = new Set(["ok", "replay", "accepted"]);

/** An answer, sent as JSON. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** What the remote reads of a request (scripts/lib/fake-remote.ts hands it over, its body read). */
export interface RemoteCall {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  /** The Idempotency-Key. */
  key: string | undefined;
  /** Shepherd-Attempt, 0 without one. */
  attempt: number;
  /** The body as sent: an end notice's signature is over these very bytes. */
  text: string;
  json: unknown;
  /** Keeps the request open until the caller closes it, or ms at most; answers nothing. */
  hold(ms?: number): undefined;
  /** Waits ms while holding the request; false when the caller closed it meanwhile. */
  pause(ms: number): Promise<boolean>;
}

const ROUTES = ["act", "compensate", "stall", "lost", "item", "worker"] as const;
export type Route = (typeof ROUTES)[number];
export const isRoute = (name: string | undefined): name is Route => (ROUTES as readonly (string | undefined)[]).includes(name);

/** The remote's settings and its ledger, shared by every request. */
export interface RemoteContext {
  seed: string;
  faults: Readonly<RemoteFaults>;
  /** The 422 decided for a key (true: always, false: never), or null to draw it. */
  declineOf: (key: string) => boolean | null;
  shepherdUrl: string | null;
  log: (line: string) => void;
  ledger: Ledger;
  closing: () => boolean;
}

type Note = (outcome: string) => void;

const REFUSALS: Partial<Record<TransientFault, Reply>> = {
  http503: { status: 503, body: { error: "temporarily unavailable" } },
  http429: { status: 429, body: { error: "slow down" }, headers: { "Retry-After": "1" } },
};

/** POST /{route}/{step}: one operation request of a workflow's step. */
export async function operation(ctx: RemoteContext, call: RemoteCall, route: Route, pathStep: string): Promise<Reply | undefined> {
  const kind = route === "compensate" ? "compensation" : "action";
  const { key } = call;
  if (key === undefined || key === "") {
    ctx.ledger.unkeyed += 1;
    return { status: 400, body: { error: "missing Idempotency-Key" } };
  }
  const item = route === "item" ? itemCall(call, pathStep) : null;
  const record = recordFor(ctx.ledger, key, { kind, workflowId: header(call, "shepherd-workflow-id"), stepId: header(call, "shepherd-step-id"), pathStep, item });
  record.requests += 1;
  if (!record.attempts.includes(call.attempt)) record.attempts.push(call.attempt);
  const ordinal = record.attempts.indexOf(call.attempt) + 1;
  const note = noter(ctx, call, record);
  if (hostDown(ctx.ledger)) {
    note("outage503");
    return { status: 503, body: { error: "host down" } };
  }
  if (route === "stall") return acceptStalling(ctx, call, record, ordinal, note);
  if (route === "lost") return loseFirstAnswer(ctx, call, record, note);
  if (route === "item") return actOnItem(ctx, call, record, ordinal, note);
  if (route === "worker") return actForWorker(ctx, call, record, note);
  if (kind === "action" && (ctx.declineOf(key) ?? isDeclined(ctx.seed, key, ctx.faults))) {
    note("http422");
    return { status: 422, body: { error: "declined" } };
  }
  return actWithFault(ctx, call, record, ordinal, note);
}

const header = (call: RemoteCall, name: string): string => String(call.req.headers[name] ?? "");

/** The item the body names (`{{ index }}` and `{{ item }}` rendered by Shepherd); a missing index is NaN, so its key is malformed. */
const itemCall = (call: RemoteCall, map: string): ItemCall => ({ map, index: Number(field(call.json, "index") ?? NaN), item: field(call.json, "item") });

/** Every request is logged; only injected faults are counted as faults (a replay is the remote's answer). */
function noter(ctx: RemoteContext, call: RemoteCall, record: KeyRecord): Note {
  return (outcome) => {
    record.log.push({ attempt: call.attempt, outcome, at: Date.now() });
    if (!ANSWERS.has(outcome)) record.faults[outcome] = (record.faults[outcome] ?? 0) + 1;
    ctx.log(`${call.req.method} ${call.req.url} key=${call.key} attempt=${call.attempt} -> ${outcome}`);
  };
}

/** The attempt's transient fault, if it draws one, around the effect applied once per key. */
async function actWithFault(ctx: RemoteContext, call: RemoteCall, record: KeyRecord, ordinal: number, note: Note): Promise<Reply | undefined> {
  const fault = transientFault(ctx.seed, record.key, call.attempt, ordinal, ctx.faults);
  const refusal = fault === "none" ? undefined : REFUSALS[fault];
  if (refusal) {
    note(fault);
    return refusal;
  }
  if (fault === "hang") {
    note(fault);
    return call.hold(HANG_CAP_MS);
  }
  if (fault === "slow") {
    note(fault);
    const delay = SLOW_MIN_MS + Math.floor(unitHash(ctx.seed, record.key, call.attempt, "delay") * (SLOW_MAX_MS - SLOW_MIN_MS));
    // A caller that gave up meanwhile (aborted, fenced) never gets the effect applied.
    if (!(await call.pause(delay))) {
      record.abandoned += 1;
      return undefined;
    }
  }
  const { replay, body } = applyOrReplay(ctx.ledger, record);
  if (fault === "executeAndTimeout") {
    // The effect is applied; the caller is never told and must retry with the same key.
    note(fault);
    return call.hold(HANG_CAP_MS);
  }
  if (fault !== "slow") note(replay ? "replay" : "ok");
  return delivered(call, record, body);
}

/** A map's item: a 503 or a hang on its key's first attempt for the keys case 27 picks, else the effect (once per key). */
function actOnItem(ctx: RemoteContext, call: RemoteCall, record: KeyRecord, ordinal: number, note: Note): Reply | undefined {
  const fault = itemFault(ctx.seed, record.key, ordinal, ctx.faults);
  if (fault === "itemHttp503") {
    note(fault);
    return { status: 503, body: { error: "temporarily unavailable" } };
  }
  if (fault === "itemHang") {
    note(fault);
    return call.hold(HANG_CAP_MS);
  }
  const { replay, body } = applyOrReplay(ctx.ledger, record);
  note(replay ? "replay" : "ok");
  return delivered(call, record, body);
}

/** A pool worker's effect: applied once per key, a repeated key (a retried task's new attempt) answered the same. */
function actForWorker(ctx: RemoteContext, call: RemoteCall, record: KeyRecord, note: Note): Reply {
  const { replay, body } = applyOrReplay(ctx.ledger, record);
  note(replay ? "replay" : "ok");
  return delivered(call, record, body);
}

function delivered(call: RemoteCall, record: KeyRecord, body: EffectBody): Reply {
  call.res.on("finish", () => {
    record.delivered = true;
  });
  return { status: 200, body };
}

/** 202, then a job reports through the token: the key's first attempt here stays stuck, later ones finish. */
function acceptStalling(ctx: RemoteContext, call: RemoteCall, record: KeyRecord, ordinal: number, note: Note): Reply {
  const stuck = ordinal === 1;
  const job: Job = { attempt: call.attempt, stuck, acceptedAt: Date.now(), heartbeats: [], completions: [], ended: null };
  record.jobs.push(job);
  note(stuck ? "stuck" : "accepted");
  const jobContext = { shepherdUrl: ctx.shepherdUrl, token: header(call, "shepherd-task-token"), job, closed: ctx.closing };
  if (stuck) void runStuckJob({ ...jobContext, progress: stuckProgress(ctx.seed, record.key), everyMs: REMOTE_BEAT_MS });
  else void runMovingJob({ ...jobContext, percents: MOVING_PERCENTS, everyMs: MOVING_BEAT_MS, finish: () => applyOrReplay(ctx.ledger, record).body });
  return { status: 202, body: { accepted: true } };
}

/** The key's first request applies the effect and loses the answer; any later one is answered (a replay). */
function loseFirstAnswer(ctx: RemoteContext, call: RemoteCall, record: KeyRecord, note: Note): Reply | undefined {
  const { replay, body } = applyOrReplay(ctx.ledger, record);
  if (record.requests > 1) {
    note(replay ? "replay" : "ok");
    return delivered(call, record, body);
  }
  // The workflow's definition says how (lib/lost-answers.ts deals the modes from the seed).
  const asked = field(call.json, "lose");
  const mode = isLostMode(asked) ? asked : DEFAULT_LOST_MODE;
  record.lost = { mode, attempt: call.attempt, at: Date.now() };
  note(`lost-${mode}`);
  if (mode === "hang") return call.hold(HANG_CAP_MS);
  call.req.socket.destroy();
  return undefined;
}

/** GET /effects/{key}, a step's `verify`: the effect of the key in the path, if it was applied. */
export function verifyEffect(ctx: RemoteContext, call: RemoteCall, pathKey: string): Reply {
  const record = ctx.ledger.keys.get(pathKey);
  const found = (record?.applied ?? 0) > 0;
  const calls = ctx.ledger.verifies.get(pathKey) ?? [];
  ctx.ledger.verifies.set(pathKey, calls);
  calls.push({ at: Date.now(), attempt: call.attempt, keyHeader: call.key ?? null, found });
  // In the key's own log too, so a failed check's timeline shows the verify between the attempts.
  record?.log.push({ attempt: call.attempt, outcome: `verify ${found ? 200 : 404}`, at: Date.now() });
  ctx.log(`GET ${call.path} key=${call.key} attempt=${call.attempt} -> ${found ? 200 : 404}`);
  return found && record ? { status: 200, body: record.appliedBody } : { status: 404, body: { error: "no effect with this key" } };
}
