/**
 * The circuit breaker of one target host for one tenant, as pure functions of its state and the time. Its object
 * (target-breaker.ts) loads, applies one of these, stores, then acts; the steps parked on it are rows of that
 * object, so the functions get what they need of them (how many, the oldest) as arguments.
 */
import { z } from "zod";
import { MAX_OPEN_MS, ResolvedBreakerSchema, type BreakerSettings } from "./settings";

export const CIRCUIT_STATES = ["closed", "open", "half_open"] as const;
export type CircuitState = (typeof CIRCUIT_STATES)[number];

/** An attempt of a workflow's step, as the breaker knows it: who to let through, or to release later. */
export interface Caller {
  workflowId: string;
  stepId: string;
}

export const BreakerStateSchema = z.object({
  tenant: z.string(),
  host: z.string(),
  state: z.enum(CIRCUIT_STATES),
  /** Transient failures in a row; a success sets it back to 0. */
  failures: z.number(),
  /** The settings of the latest report: steps calling one host may differ, and the latest one wins. */
  settings: ResolvedBreakerSchema,
  /** How long the current (or next) open period lasts: the setting, doubled by every failed probe, up to MAX_OPEN_MS. */
  openMs: z.number(),
  /** Open until then; half-open since then. */
  openUntil: z.number().optional(),
  /** The one attempt a half-open breaker lets through, and since when. */
  probe: z.object({ workflowId: z.string(), stepId: z.string(), since: z.number() }).optional(),
  /** After a close, parked steps go back at a bounded rate: how many seconds in, and when the next batch goes. */
  releasing: z.object({ round: z.number(), nextAt: z.number() }).optional(),
  /** Rises with every change, so a late write to the listing cannot move it back. */
  version: z.number(),
  updatedAt: z.number(),
});

export type BreakerState = z.infer<typeof BreakerStateSchema>;

/** Parked steps released per second after a close: 10 in the first second, doubling each second, at most 100. */
export const RELEASE = { first: 10, max: 100, everyMs: 1_000 };

/**
 * A probe that never reports (its agent died, its workflow was cancelled) must not hold the breaker half-open for
 * ever: after this many open periods another attempt may probe.
 */
export const PROBE_PATIENCE = 2;

export function newBreaker(tenant: string, host: string, settings: BreakerSettings, now: number): BreakerState {
  return { tenant, host, state: "closed", failures: 0, settings, openMs: settings.openMs, version: 0, updatedAt: now };
}

/** A transient failure: opens a closed breaker at the threshold, and re-opens a half-open one for twice as long. */
export function recordFailure(breaker: BreakerState, settings: BreakerSettings, now: number): { breaker: BreakerState; openedNow: boolean } {
  const next: BreakerState = { ...breaker, settings, failures: breaker.failures + 1 };
  if (breaker.state === "closed" && next.failures >= settings.failures) return { breaker: opened(next, settings.openMs, now), openedNow: true };
  if (breaker.state === "half_open") return { breaker: opened(next, Math.min(MAX_OPEN_MS, Math.max(settings.openMs, breaker.openMs * 2)), now), openedNow: true };
  return { breaker: next, openedNow: false };
}

function opened(breaker: BreakerState, openMs: number, now: number): BreakerState {
  const { probe: _probe, releasing: _releasing, ...rest } = breaker;
  return { ...rest, state: "open", openMs, openUntil: now + openMs };
}

/**
 * The host answered: the failures in a row are over. A breaker that was open or half-open closes (the probe
 * succeeded, or an attempt let through before it opened did), and its parked steps start going back.
 */
export function recordSuccess(breaker: BreakerState, settings: BreakerSettings, now: number, parked: number): BreakerState {
  if (breaker.state === "closed") return { ...breaker, settings, failures: 0 };
  const { probe: _probe, openUntil: _openUntil, ...rest } = breaker;
  return { ...rest, settings, state: "closed", failures: 0, openMs: settings.openMs, ...(parked > 0 ? { releasing: { round: 0, nextAt: now } } : {}) };
}

/**
 * May this attempt call the host? A closed breaker lets everyone through; an open one no one (the caller parks);
 * a half-open one exactly one probe, or another once the probe has gone quiet for PROBE_PATIENCE open periods.
 */
export function admit(breaker: BreakerState, settings: BreakerSettings, caller: Caller, now: number): { breaker: BreakerState; admitted: boolean } {
  let next: BreakerState = { ...breaker, settings };
  if (next.state === "closed") return { breaker: next, admitted: true };
  if (next.state === "open") {
    if (now < (next.openUntil ?? 0)) return { breaker: next, admitted: false };
    next = { ...next, state: "half_open" };
  }
  if (next.probe && !isSameCaller(next.probe, caller) && !probeGoneQuiet(next, now)) return { breaker: next, admitted: false };
  return { breaker: { ...next, probe: { ...caller, since: now } }, admitted: true };
}

/**
 * The alarm: an open period that ended makes the breaker half-open and sends the oldest parked step as its
 * probe; a probe gone quiet is replaced the same way; after a close, the next batch of parked steps goes back.
 * Returns who to release now (the caller deletes them from its parked rows first).
 */
export function onAlarm(breaker: BreakerState, now: number, parked: { count: number; oldest?: Caller }): { breaker: BreakerState; release: "probe" | number } {
  if (breaker.state === "open" && now >= (breaker.openUntil ?? 0)) return sendProbe({ ...breaker, state: "half_open" }, now, parked.oldest);
  if (breaker.state === "half_open" && (!breaker.probe || probeGoneQuiet(breaker, now))) return sendProbe(breaker, now, parked.oldest);
  const releasing = breaker.releasing;
  if (breaker.state !== "closed" || !releasing || releasing.nextAt > now) return { breaker, release: 0 };
  const batch = Math.min(RELEASE.max, RELEASE.first * 2 ** releasing.round);
  const { releasing: _releasing, ...rest } = breaker;
  const more = parked.count > batch;
  return { breaker: more ? { ...rest, releasing: { round: releasing.round + 1, nextAt: now + RELEASE.everyMs } } : rest, release: Math.min(batch, parked.count) };
}

/** With nothing parked, the next attempt an agent brings to `admit` becomes the probe. */
function sendProbe(breaker: BreakerState, now: number, oldest: Caller | undefined): { breaker: BreakerState; release: "probe" | number } {
  const { probe: _probe, ...rest } = breaker;
  if (!oldest) return { breaker: rest, release: 0 };
  return { breaker: { ...rest, probe: { workflowId: oldest.workflowId, stepId: oldest.stepId, since: now } }, release: "probe" };
}

/** The probe's workflow did not take the release (the step is gone, or no longer parked): another may probe. */
export function probeNotTaken(breaker: BreakerState, caller: Caller): BreakerState {
  if (breaker.state !== "half_open" || !breaker.probe || !isSameCaller(breaker.probe, caller)) return breaker;
  const { probe: _probe, ...rest } = breaker;
  return rest;
}

/** When the alarm must next look: the end of the open period, the probe's patience, the next release batch. */
export function nextAlarmAt(breaker: BreakerState, parked: number): number | undefined {
  switch (breaker.state) {
    case "open":
      return breaker.openUntil;
    case "half_open":
      if (breaker.probe) return breaker.probe.since + PROBE_PATIENCE * breaker.openMs;
      return parked > 0 ? breaker.updatedAt : undefined;
    case "closed":
      return parked > 0 ? breaker.releasing?.nextAt : undefined;
  }
}

function probeGoneQuiet(breaker: BreakerState, now: number): boolean {
  return breaker.probe !== undefined && now - breaker.probe.since >= PROBE_PATIENCE * breaker.openMs;
}

function isSameCaller(a: Caller, b: Caller): boolean {
  return a.workflowId === b.workflowId && a.stepId === b.stepId;
}
