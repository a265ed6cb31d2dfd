// A host that goes down (contract v1.1, "Supervision beyond deadlines": the circuit breaker per tenant and
// target host). A second remote, chaos/remote.ts again on the next port and without faults, goes down in the
// middle of the run: a batch of workflows is started against it with `breaker: {openMs: 5000}` and a retry
// policy that, calling on, would spend every attempt inside the outage, and from the first call it gets it
// answers every operation 503 for OUTAGE_MS. From the first call, not from the start: under the full soak's
// burst the queue runs 20 s behind and more, so a clock started with the batch could end before its first
// attempt arrives (a full soak saw 4 of 20 first calls reach the host while it was down). What the engine must do instead: open the breaker after 5 failures in a row, park the
// attempts due meanwhile without using them up, probe, and once the host answers release them. Meanwhile
// GET /v1/targets is sampled every second, until the batch ended and the breaker reads closed again.
/* global URL */
import { sampleEvery, sleep } from "../../scripts/lib/async.ts";
import type { ShepherdClient } from "./client.ts";
import type { TargetRow } from "./api-shapes.ts";
import { familyId, familyWorkflow, remotePost } from "./definitions.ts";
import type { Definition, RetryPolicy, SoakWorkflow } from "./definitions.ts";
import type { HostOutage, OperationTotals, RemoteStats } from "./remote-ledger.ts";
import { newResult } from "./results.ts";
import type { WorkflowResult } from "./results.ts";
import { driveFamily } from "./scenario-driver.ts";

export const BREAKER_KIND = "breaker";
export const OUTAGE_MS = 20_000;
export const BREAKER_OPEN_MS = 5_000;
/**
 * Backoff 1, 2, 4, 4 s: a step that kept calling would have spent all five attempts within the outage's first
 * 14 s and failed. Why not fewer: on a correct engine a step may use one attempt on its first call (a 503 before
 * the breaker opened), one as a failed probe (two probes fail in a 20 s outage), one or two more to the Worker's
 * own faults (an agent that dies after its claim, 5 % a claim), and one to succeed. With four, runs showed a
 * step at 4 of 4 (503, failed probe, dead agent, success).
 */
export const BATCH_RETRY: RetryPolicy & { maxAttempts: number } = { maxAttempts: 5, initialIntervalMs: 1_000, backoffCoefficient: 2, maxIntervalMs: 4_000, jitter: 0.2 };
const STEPS = ["s1", "s2"] as const;
/**
 * The host answers at once, so heartbeats only find agents the Worker's faults killed; 1 s (the regular soak's)
 * also timed out live attempts under the full soak's backlog, each one an attempt this check would count.
 */
const BATCH_HEARTBEAT_MS = 3_000;
const SAMPLE_EVERY_MS = 1_000;
/** After the batch ended, how long the harness reads the listing for the breaker to show closed. */
const CLOSED_WAIT_MS = 15_000;

/** The second host, as the scenario drives it (chaos/remote.ts). */
export interface SecondHost {
  url: string;
  /** Every operation answers 503 for `ms` from the next one on; the outage's from/to are filled in then. */
  armOutage(ms: number): HostOutage;
}

/** A reading of the listing: the rows of the hosts asked about, by host. */
export interface TargetsSample {
  at: number;
  rows: Record<string, TargetRow>;
}

/** The last reading of the second host's row. */
export interface FinalTarget {
  at: number;
  status: number;
  target: TargetRow | null;
}

export interface TargetsSeen {
  available: boolean | null;
  missingStatus: number | null;
  errors: number;
  samples: TargetsSample[];
  final?: FinalTarget;
}

/** What the scenario saw; `skipped` when the run's deadline came before the outage. */
export type BreakerRun =
  | { skipped: string; host: string; mainHost: string; results: WorkflowResult[] }
  | { skipped?: undefined; host: string; mainHost: string; outage: HostOutage; results: WorkflowResult[]; targets: TargetsSeen };

export interface BreakerScenario {
  client: ShepherdClient;
  remote: SecondHost;
  /** The main remote's host: its breaker is read beside, and must never open. */
  mainHost: string;
  workflows: SoakWorkflow[];
  /** When the host goes down (epoch ms). */
  outageAt: number;
  deadline: number;
  onStarted?: (id: string) => void;
  onEnded?: (id: string) => void;
  log: (message: string) => void;
}

/** `count` two-step workflows `chaos-<seed>-breaker-NNNN`, both steps on the second host. */
export function buildBreakerBatch({ seed, count, hostUrl }: { seed: string; count: number; hostUrl: string }): SoakWorkflow[] {
  const steps = STEPS.map((stepId) => ({
    id: stepId,
    action: remotePost(`${hostUrl}/act/${stepId}`, stepId),
    compensate: remotePost(`${hostUrl}/compensate/${stepId}`, stepId),
    timeouts: { startToCloseMs: 2_000 },
  }));
  const definition: Definition = {
    name: `chaos-${BREAKER_KIND}`,
    onFailure: "compensate",
    defaults: { retry: BATCH_RETRY, timeouts: { heartbeatMs: BATCH_HEARTBEAT_MS }, breaker: { openMs: BREAKER_OPEN_MS } },
    steps,
  };
  return Array.from({ length: count }, (_, i) => {
    const id = familyId(seed, BREAKER_KIND, i);
    return familyWorkflow(BREAKER_KIND, { id, input: { n: i + 1 }, definition });
  });
}

/**
 * At `outageAt` (epoch ms) arms `remote`'s outage, starts the batch against it and samples the listing of the
 * second host and the main remote every second until the batch ended and the second host's breaker reads
 * closed. Resolves to {host, mainHost, outage, results, targets: {available, samples, final}}; `outage.from`
 * is null when no call reached the host. With `skipped` when the run's deadline comes first.
 */
export async function runBreakerScenario({ client, remote, mainHost, workflows, outageAt, deadline, onStarted, onEnded, log }: BreakerScenario): Promise<BreakerRun> {
  const host = new URL(remote.url).host;
  if (outageAt >= deadline) {
    const results = workflows.map((wf) => ({ ...newResult(wf.id, wf.kind), startError: "the run's deadline came before the outage" }));
    return { host, mainHost, skipped: "the run's deadline came before the outage was due", results };
  }
  await sleep(Math.max(0, outageAt - Date.now()));
  const outage = remote.armOutage(OUTAGE_MS);
  log(`second host ${host} down for ${OUTAGE_MS / 1000} s from its next call; starting ${workflows.length} workflows against it (breaker openMs ${BREAKER_OPEN_MS} ms, maxAttempts ${BATCH_RETRY.maxAttempts})`);
  const sampler = startTargetsSampler(client, [host, mainHost]);
  const results = await driveFamily({ client, workflows, startAt: () => Date.now(), deadline, onStarted, onEnded });
  const final = await readUntilClosed(client, host, Math.min(deadline, Date.now() + CLOSED_WAIT_MS));
  const targets = await sampler.stop();
  const down = outage.from === null ? "no call reached the host" : `the host went down ${((outage.from - outage.armedAt) / 1000).toFixed(1)} s after the batch's start`;
  log(`breaker batch over ${((Date.now() - outage.armedAt) / 1000).toFixed(1)} s after its start (${down}); its breaker reads ${final.target?.state ?? `nothing (${final.status})`}`);
  return { host, mainHost, outage, results, targets: { ...targets, final } };
}

/** One reading of GET /v1/targets: the rows of `hosts` by host, or why there are none. */
type TargetsReading =
  | { status: number; missing: boolean; rows?: undefined }
  | { status: 200; missing: false; at: number; rows: Record<string, TargetRow> };

async function readTargets(client: ShepherdClient, hosts: readonly string[]): Promise<TargetsReading> {
  const res = await client.listTargets();
  if (res.status === 404 || res.status === 405) return { status: res.status, missing: true };
  if (res.status !== 200 || !res.value) return { status: res.status, missing: false };
  const rows = Object.fromEntries(res.value.targets.filter((t) => hosts.includes(t.host)).map((t) => [t.host, t]));
  return { status: 200, missing: false, at: Date.now(), rows };
}

function startTargetsSampler(client: ShepherdClient, hosts: readonly string[]): { stop(): Promise<TargetsSeen> } {
  const state: TargetsSeen = { available: null, missingStatus: null, errors: 0, samples: [] };
  const sampler = sampleEvery(SAMPLE_EVERY_MS, async () => {
    const reading = await readTargets(client, hosts);
    if (reading.missing) {
      Object.assign(state, { available: false, missingStatus: reading.status });
      return false;
    }
    if (!reading.rows) state.errors += 1;
    else {
      state.available = true;
      state.samples.push({ at: reading.at, rows: reading.rows });
    }
    return undefined;
  });
  return { stop: () => sampler.stop().then(() => state) };
}

/** Reads the listing every second until `host`'s breaker is closed or `until`; the last reading of it. */
async function readUntilClosed(client: ShepherdClient, host: string, until: number): Promise<FinalTarget> {
  for (;;) {
    const reading = await readTargets(client, [host]);
    const last = { at: Date.now(), status: reading.status, target: reading.rows?.[host] ?? null };
    if (reading.missing || last.target?.state === "closed" || Date.now() >= until) return last;
    await sleep(SAMPLE_EVERY_MS);
  }
}

/**
 * The two hosts' stats as one, for the checks that read every key (effects, key shapes, timelines): workflow ids
 * differ between the hosts' families, so no key is on both.
 */
export function mergeRemoteStats(main: RemoteStats, second: RemoteStats): RemoteStats {
  return {
    ...main,
    unkeyedRequests: main.unkeyedRequests + second.unkeyedRequests,
    totals: { action: addTotals(main.totals.action, second.totals.action), compensation: addTotals(main.totals.compensation, second.totals.compensation) },
    keys: { ...main.keys, ...second.keys },
    ops: { ...main.ops, ...second.ops },
    verifies: { ...main.verifies, ...second.verifies },
  };
}

function addTotals(a: OperationTotals, b: OperationTotals): OperationTotals {
  const faults = { ...a.faults };
  for (const [fault, n] of Object.entries(b.faults)) faults[fault] = (faults[fault] ?? 0) + n;
  return {
    keys: a.keys + b.keys,
    requests: a.requests + b.requests,
    applied: a.applied + b.applied,
    replays: a.replays + b.replays,
    replaysAfterDelivered: a.replaysAfterDelivered + b.replaysAfterDelivered,
    abandoned: a.abandoned + b.abandoned,
    malformedKeys: a.malformedKeys + b.malformedKeys,
    faults,
  };
}
