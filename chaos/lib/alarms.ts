// Watching the supervisor: each workflow's Durable Object alarm, read through the dev-only
// GET /dev/workflows/{id} → {id, status, alarmAt, readAt, nextDeadlineAt, storage}. Sampled while the soak runs (the
// interesting moment is just after the restart, when an alarm that did not survive would show as overdue)
// and read once more for every workflow at the end. Each read's round trip is kept too: a long poll's answer makes
// the same trip out through the front door, and the pool check allows it what the reads took at that moment.
import { mapPool, sampleEvery } from "../../scripts/lib/async.ts";
import { TERMINAL_STATUSES } from "./client.ts";
import type { ShepherdClient } from "./client.ts";
import type { DevWorkflow } from "./api-shapes.ts";

export const OVERDUE_LIMIT_MS = 5_000;

/** One dev read's round trip as the soak saw it: sent and answered, epoch ms. */
export type RoundTrip = readonly [sentAt: number, answeredAt: number];

/**
 * The sampler keeps the slowest of its reads' round trips, between this many and twice as many: a soak makes
 * tens of thousands of reads, and only the slow ones (the runtime's queue at its longest) excuse a late poll.
 */
export const ROUND_TRIPS_KEPT = 1_000;

export interface AlarmVerdict {
  overdueMs: number;
  /** An alarm left on a terminal workflow. */
  leftoverAlarm: boolean;
  /** A pending deadline without an alarm. */
  lost: boolean;
}

/** What the sampler saw during the run: the worst 20 overdue and lost alarms. */
export interface AlarmSamples {
  available: boolean | null;
  samples: number;
  maxOverdueMs: number;
  worst: (Pick<DevWorkflow, "status" | "alarmAt" | "nextDeadlineAt"> & { id: string; overdueMs: number; at: number })[];
  lost: (Pick<DevWorkflow, "status" | "nextDeadlineAt"> & { id: string; at: number })[];
  /** The round trips of its answered reads through the front door, the slowest kept (`keepRoundTrip`). */
  roundTrips: RoundTrip[];
}

/** The one read the sampler makes. */
type DevReads = Pick<ShepherdClient, "getDevWorkflow">;

export type DevRouteProbe = { available: true } | { available: false | null; status: number; body?: unknown };

/**
 * How overdue one object's supervision is. Non-terminal: now − alarmAt, or now − nextDeadlineAt when the
 * alarm is missing although a deadline is pending (a lost alarm). Terminal: no alarm should remain.
 */
export function judgeAlarm(dev: DevWorkflow, receivedAt: number): AlarmVerdict {
  // The object's own reading time when it gives one: a slow answer under load is not a late alarm.
  const now = typeof dev.readAt === "number" ? dev.readAt : receivedAt;
  const terminal = TERMINAL_STATUSES.has(dev.status);
  if (terminal) return { overdueMs: 0, leftoverAlarm: dev.alarmAt !== null && dev.alarmAt !== undefined, lost: false };
  if (dev.alarmAt !== null && dev.alarmAt !== undefined) return { overdueMs: Math.max(0, now - dev.alarmAt), leftoverAlarm: false, lost: false };
  const pending = dev.nextDeadlineAt ?? null;
  return { overdueMs: pending === null ? 0 : Math.max(0, now - pending), leftoverAlarm: false, lost: pending !== null };
}

/**
 * Whether this build serves the dev route: asked about a workflow that exists, a 404 means the route is
 * missing (the API's "not found" for a known workflow would be a bug, not a missing feature). `available`
 * is null when the answer says nothing (no connection, a 5xx): ask again later.
 */
export async function probeDevRoute(client: DevReads, existingId: string): Promise<DevRouteProbe> {
  const res = await client.getDevWorkflow(existingId);
  if (res.status === 200 && res.value && "alarmAt" in res.value) return { available: true };
  if (res.status === 0 || res.status >= 500) return { available: null, status: res.status };
  return { available: false, status: res.status, body: res.body };
}

/**
 * Samples the alarms of the workflows `inFlight()` returns every `intervalMs` until stopped. Skips while
 * `paused()` (Shepherd is restarting) and stops itself after the route proves missing.
 */
export function startAlarmSampler({ client, inFlight, paused, intervalMs = 2_000 }: { client: ShepherdClient; inFlight: () => string[]; paused: () => boolean; intervalMs?: number }): { state: AlarmSamples; stop(): Promise<AlarmSamples> } {
  const state: AlarmSamples = { available: null, samples: 0, maxOverdueMs: 0, worst: [], lost: [], roundTrips: [] };
  const reads = timedReads(client, state.roundTrips);
  const sampler = sampleEvery(intervalMs, async () => {
    if (paused()) return undefined;
    const ids = inFlight();
    if (ids[0] === undefined) return undefined;
    if (state.available === null) {
      const probe = await probeDevRoute(reads, ids[0]);
      if (probe.available === null) return undefined;
      state.available = probe.available;
      if (!probe.available) return false;
    }
    // A few at a time: hundreds of reads at once would load the service the soak is measuring.
    await mapPool(ids, 10, (id: string) => sampleOne(reads, id, state));
    return undefined;
  });
  return { state, stop: () => sampler.stop().then(() => state) };
}

/** One workflow's alarm, read now: the worst overdue and lost ones are kept (20 of each) for the report. */
async function sampleOne(client: DevReads, id: string, state: AlarmSamples): Promise<void> {
  const { value: dev } = await client.getDevWorkflow(id);
  if (!dev) return;
  const now = Date.now();
  const verdict = judgeAlarm(dev, now);
  state.samples += 1;
  if (verdict.overdueMs > state.maxOverdueMs) state.maxOverdueMs = verdict.overdueMs;
  if (verdict.overdueMs > OVERDUE_LIMIT_MS && state.worst.length < 20) {
    state.worst.push({ id, status: dev.status, alarmAt: dev.alarmAt, nextDeadlineAt: dev.nextDeadlineAt, overdueMs: verdict.overdueMs, at: now });
  }
  if (verdict.lost && state.lost.length < 20) state.lost.push({ id, status: dev.status, nextDeadlineAt: dev.nextDeadlineAt, at: now });
}

/**
 * The client's dev read, each answered one's round trip kept in `trips`. A read without an answer (refused, timed
 * out) is left out: its time is the client's timeout or the restart's, not a trip through the front door.
 */
function timedReads(client: DevReads, trips: RoundTrip[]): DevReads {
  return {
    async getDevWorkflow(workflowId) {
      const sentAt = Date.now();
      const answer = await client.getDevWorkflow(workflowId);
      if (answer.status !== 0) keepRoundTrip(trips, [sentAt, Date.now()]);
      return answer;
    },
  };
}

/** Adds one round trip; at twice `ROUND_TRIPS_KEPT`, only the slowest `ROUND_TRIPS_KEPT` stay (in no set order). */
export function keepRoundTrip(trips: RoundTrip[], trip: RoundTrip, kept = ROUND_TRIPS_KEPT): void {
  trips.push(trip);
  if (trips.length < 2 * kept) return;
  trips.sort((a, b) => b[1] - b[0] - (a[1] - a[0]));
  trips.length = kept;
}
