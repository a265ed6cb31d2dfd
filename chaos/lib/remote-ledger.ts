// The remote's bookkeeping, which the checks read (`GET /stats`): one record per Idempotency-Key with every
// request, fault and job, the effects per logical operation (workflow, step, action|compensation: an engine that
// varied the key between attempts shows up there), the verify calls, and the outages of the breaker's host.
// Like a real idempotent API it applies an effect once per key and answers a repeated key with the stored
// response, counting every request that would have applied again ("replays") so duplicates stay visible.
import type { LostMode } from "./lost-answers.ts";
import type { RemoteFaults } from "./faults.ts";
import type { Job } from "./task-callbacks.ts";

export type OperationKind = "action" | "compensation";

/** An action's effect; a map item's echoes its index and item, so its place in the map's output can be checked. */
export type EffectBody = { effectId: string; step: string; index?: number; item?: unknown } | { compensated: true; step: string };

/** A map item as the remote saw it: the map step (the path's) and the index and item Shepherd rendered into the body. */
export interface ItemCall {
  map: string;
  index: number;
  item: unknown;
}

export interface LogEntry {
  attempt: number;
  outcome: string;
  at: number;
}

export interface KeyRecord {
  key: string;
  kind: OperationKind;
  workflowId: string;
  stepId: string;
  /** The key Shepherd must send for this operation: <workflowId>:<stepId>[:compensate] or, for a map's item, <workflowId>:<mapStepId>:<index>. */
  wellFormed: boolean;
  /** Set for a map's item (POST /item/{mapStepId}). */
  item: ItemCall | null;
  requests: number;
  attempts: number[];
  applied: number;
  replays: number;
  replaysAfterDelivered: number;
  /** Slow requests whose caller gave up before the effect. */
  abandoned: number;
  faults: Record<string, number>;
  delivered: boolean;
  appliedAt: number | null;
  appliedBody: EffectBody | null;
  log: LogEntry[];
  /** The jobs behind /stall's 202s. */
  jobs: Job[];
  /** How /lost lost its first answer. */
  lost: { mode: LostMode; attempt: number; at: number } | null;
}

export interface VerifyCall {
  at: number;
  attempt: number;
  keyHeader: string | null;
  found: boolean;
}

/** The breaker host's outage: armed, then from the next operation request on for `ms`. */
export interface HostOutage {
  ms: number;
  armedAt: number;
  from: number | null;
  to: number | null;
}

export interface OperationTotals {
  keys: number;
  requests: number;
  applied: number;
  replays: number;
  replaysAfterDelivered: number;
  abandoned: number;
  malformedKeys: number;
  faults: Record<string, number>;
}

/** `GET /stats`. */
export interface RemoteStats {
  seed: string;
  faults: Readonly<RemoteFaults>;
  uptimeMs: number;
  unkeyedRequests: number;
  heldSockets: number;
  totals: Record<OperationKind, OperationTotals>;
  keys: Record<string, KeyRecord>;
  ops: Record<string, number>;
  verifies: Record<string, VerifyCall[]>;
  outages: HostOutage[];
}

/** An idempotent API's memory (scripts/lib/fake-remote.ts): the answer stored per key. */
export interface IdempotencyStore<V> {
  once(key: string | undefined, apply: () => V): { replay: boolean; value: V };
  get(key: string | undefined): V | undefined;
}

export interface Ledger {
  keys: Map<string, KeyRecord>;
  ops: Map<string, number>;
  answers: IdempotencyStore<EffectBody>;
  /** Key in the path of GET /effects → every verify call for it. */
  verifies: Map<string, VerifyCall[]>;
  outages: HostOutage[];
  /** An outage that begins with the next operation request (armOutage). */
  armed: HostOutage | null;
  effectSeq: number;
  unkeyed: number;
}

export function newLedger(answers: IdempotencyStore<EffectBody>): Ledger {
  return { keys: new Map(), ops: new Map(), answers, verifies: new Map(), outages: [], armed: null, effectSeq: 0, unkeyed: 0 };
}

/** Who sent an operation: the Shepherd-* headers, the step the path names, and the item the body names. */
export interface Caller {
  kind: OperationKind;
  workflowId: string;
  stepId: string;
  pathStep: string;
  item?: ItemCall | null;
}

/** The key's record, made at its first request. */
export function recordFor(ledger: Ledger, key: string, caller: Caller): KeyRecord {
  const known = ledger.keys.get(key);
  if (known) return known;
  const { kind, workflowId, stepId, item = null } = caller;
  const record: KeyRecord = {
    key, kind, workflowId, stepId, item,
    wellFormed: isWellFormedKey(key, caller),
    requests: 0, attempts: [], applied: 0, replays: 0, replaysAfterDelivered: 0, abandoned: 0,
    faults: {}, delivered: false, appliedAt: null, appliedBody: null, log: [],
    jobs: [], lost: null,
  };
  ledger.keys.set(key, record);
  return record;
}

/**
 * The contract's keys (README, "What a remote service receives"): <workflowId>:<stepId>[:compensate] for a step the
 * path names; for a map's item (v1.2, "Map"), <workflowId>:<mapStepId>:<index> with the index Shepherd rendered
 * into the body, whatever step id its headers carry.
 */
export function isWellFormedKey(key: string, { kind, workflowId, stepId, pathStep, item }: Caller): boolean {
  if (item) return kind === "action" && key === `${workflowId}:${item.map}:${item.index}`;
  const expected = kind === "action" ? `${workflowId}:${stepId}` : `${workflowId}:${stepId}:compensate`;
  return key === expected && stepId === pathStep;
}

/** The logical operation a key applies: an engine that varied the key between attempts applies it twice. */
export function operationOf(record: Pick<KeyRecord, "workflowId" | "stepId" | "kind" | "item">): string {
  const step = record.item ? `${record.item.map}[${record.item.index}]` : record.stepId;
  return `${record.workflowId}|${step}|${record.kind}`;
}

/** Applies the effect once per key; a repeated key gets the stored response (counted as a replay). */
export function applyOrReplay(ledger: Ledger, record: KeyRecord): { replay: boolean; body: EffectBody } {
  const { replay, value } = ledger.answers.once(record.key, () => {
    ledger.effectSeq += 1;
    record.applied += 1;
    record.appliedAt = Date.now();
    const op = operationOf(record);
    ledger.ops.set(op, (ledger.ops.get(op) ?? 0) + 1);
    record.appliedBody = record.kind === "compensation" ? { compensated: true, step: record.stepId } : actionEffect(ledger.effectSeq, record);
    return record.appliedBody;
  });
  if (replay) {
    record.replays += 1;
    if (record.delivered) record.replaysAfterDelivered += 1;
  }
  return { replay, body: value };
}

function actionEffect(seq: number, record: KeyRecord): EffectBody {
  const effect = { effectId: `eff_${String(seq).padStart(5, "0")}`, step: record.stepId };
  return record.item ? { ...effect, index: record.item.index, item: record.item.item } : effect;
}

/** Whether the host is down now; an armed outage begins with this request. */
export function hostDown(ledger: Ledger): boolean {
  if (ledger.armed) {
    Object.assign(ledger.armed, { from: Date.now(), to: Date.now() + ledger.armed.ms });
    ledger.outages.push(ledger.armed);
    ledger.armed = null;
  }
  return ledger.outages.some((o) => o.from !== null && o.to !== null && o.from <= Date.now() && Date.now() < o.to);
}

/** The ledger as GET /stats answers it: totals per operation kind, and every record. */
export function ledgerStats(ledger: Ledger, about: Pick<RemoteStats, "seed" | "faults" | "uptimeMs" | "heldSockets">): RemoteStats {
  const totals = { action: emptyTotals(), compensation: emptyTotals() };
  for (const record of ledger.keys.values()) {
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
    seed: about.seed,
    faults: about.faults,
    uptimeMs: about.uptimeMs,
    unkeyedRequests: ledger.unkeyed,
    heldSockets: about.heldSockets,
    totals,
    keys: Object.fromEntries([...ledger.keys].map(([key, r]) => [key, { ...r }])),
    ops: Object.fromEntries(ledger.ops),
    verifies: Object.fromEntries(ledger.verifies),
    outages: [...ledger.outages],
  };
}

function emptyTotals(): OperationTotals {
  return { keys: 0, requests: 0, applied: 0, replays: 0, replaysAfterDelivered: 0, abandoned: 0, malformedKeys: 0, faults: {} };
}
