// The remote service's fault plan: which fault a request gets, decided only by (seed, Idempotency-Key,
// attempt), so a run is reproducible and the harness can predict the outcome the remote forces on a workflow.
// Shared by chaos/remote.ts (which applies it) and the harness (which predicts declined workflows).

/** Transient fault kinds, in the order their probability bands are laid out on [0, 1). */
export const TRANSIENT_KINDS = ["slow", "hang", "executeAndTimeout", "http503", "http429"] as const;

export type TransientFault = (typeof TRANSIENT_KINDS)[number];
/** A map item's faults (reliability case 27): per item key, once, on the key's first attempt that reaches the remote. */
export const ITEM_FAULT_KINDS = ["itemHttp503", "itemHang"] as const;
export type ItemFault = (typeof ITEM_FAULT_KINDS)[number];
export type RemoteFaultKind = TransientFault | ItemFault | "decline";
/** A probability per remote fault. */
export type RemoteFaults = Record<RemoteFaultKind, number>;

export const isRemoteFaultKind = (name: string): name is RemoteFaultKind =>
  name === "decline" || (TRANSIENT_KINDS as readonly string[]).includes(name) || (ITEM_FAULT_KINDS as readonly string[]).includes(name);

/** Per-attempt probabilities of the transient faults, and the per-key probability of a permanent 422. */
export const DEFAULT_REMOTE_FAULTS: Readonly<RemoteFaults> = Object.freeze({
  slow: 0.05,
  hang: 0.05,
  executeAndTimeout: 0.05,
  http503: 0.1,
  http429: 0.05,
  // Per action key, not per attempt: a decline is permanent, so every attempt of that key gets it. About 6 %
  // of 4-step workflows are declined and must end `compensated`; they are left out of the progress threshold.
  decline: 0.015,
  // Case 27's: 5 % of a map's items answer 503 once, 1 % hang once.
  itemHttp503: 0.05,
  itemHang: 0.01,
});

/** The breaker scenario's second host answers at once (it has an outage instead, lib/breaker.ts). */
export const NO_REMOTE_FAULTS: Readonly<RemoteFaults> = Object.freeze({ slow: 0, hang: 0, executeAndTimeout: 0, http503: 0, http429: 0, decline: 0, itemHttp503: 0, itemHang: 0 });

/**
 * The circuit breaker of every workflow that calls the main remote (contract v1.1, "Supervision beyond
 * deadlines"). About a quarter of first attempts fail transiently here (503, 429, hang, ExecuteAndTimeout), so
 * with hundreds of attempts in flight the default of 5 failures in a row happens by chance: a quick soak saw
 * the breaker open twice, parking healthy steps for 30 s with no outage at all. 50 in a row at that rate is
 * about 1e-30, so a breaker that opens on the main remote means a step's setting was not applied (the
 * breaker check says so). The breaker itself is the second host's scenario (lib/breaker.ts). Breakers are
 * per host and use the settings of the latest attempt reported, so every family calling this host sets it.
 */
export const MAIN_REMOTE_BREAKER = Object.freeze({ failures: 50 });

/**
 * Only the first FAULTY_ATTEMPTS distinct attempts of a key that reach the remote can be faulted: faults hit
 * early attempts, so with retry.maxAttempts 5 a step always keeps attempts for the engine's own faults.
 */
export const FAULTY_ATTEMPTS = 2;

/** 32-bit FNV-1a of a string; enough to spread keys evenly, and identical in every process. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** A uniform number in [0, 1) determined by the parts alone (a murmur3 finaliser over FNV-1a). */
export function unitHash(...parts: (string | number)[]): number {
  let h = fnv1a(parts.join("\u0000"));
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}

/** A small seeded PRNG (mulberry32) for the harness's own choices (step counts, timeouts). */
export function seededRandom(seed: string, salt = ""): () => number {
  let state = Math.floor(unitHash(seed, salt) * 2 ** 32) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** The i-th of a round-robin deal from a list that is never empty. */
export function dealt<T>(list: readonly [T, ...T[]], i: number): T {
  return list[i % list.length] ?? list[0];
}

export function isCompensationKey(key: string): boolean {
  return key.endsWith(":compensate");
}

/** Whether the remote answers 422 to every attempt of this action key. Compensations are never declined. */
export function isDeclined(seed: string, key: string, faults: Readonly<RemoteFaults>): boolean {
  return !isCompensationKey(key) && unitHash(seed, key, "decline") < faults.decline;
}

/**
 * The transient fault for one attempt of a key, or "none". `ordinal` is how many distinct attempts of the key
 * the remote has seen, this one included; the draw itself depends only on (seed, key, attempt).
 */
export function transientFault(seed: string, key: string, attempt: number, ordinal: number, faults: Readonly<RemoteFaults>): TransientFault | "none" {
  if (ordinal > FAULTY_ATTEMPTS) return "none";
  const draw = unitHash(seed, key, attempt, "transient");
  let band = 0;
  for (const kind of TRANSIENT_KINDS) {
    band += faults[kind];
    if (draw < band) return kind;
  }
  return "none";
}

/**
 * A map item's fault, or "none": drawn once per key (seed, key), so the same ~5 % of keys answer 503 and ~1 % hang,
 * each only on the key's first attempt that reaches the remote (`ordinal` 1); its retry is answered.
 */
export function itemFault(seed: string, key: string, ordinal: number, faults: Readonly<RemoteFaults>): ItemFault | "none" {
  if (ordinal !== 1) return "none";
  const draw = unitHash(seed, key, "item");
  if (draw < faults.itemHttp503) return "itemHttp503";
  if (draw < faults.itemHttp503 + faults.itemHang) return "itemHang";
  return "none";
}

/** Validates a fault table: every probability in [0, 1], and the transient bands not above 1 in total. */
export function checkFaultTable(faults: Readonly<Record<string, number>>, kinds: readonly string[]): void {
  for (const kind of kinds) {
    const p = faults[kind];
    if (typeof p !== "number" || !(p >= 0 && p <= 1)) throw new Error(`fault probability ${kind} must be in [0, 1] (got ${p})`);
  }
}
