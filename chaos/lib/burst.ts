// The burst (row 26 of the fault matrix in docs/reliability.md, in the soak): far more workflows than the consumers can take,
// started at once from many clients while the regular soak runs, so Shepherd's own queue backs up. What it
// must show: the backlog fails nobody (no attempt used up by waiting in our queue), and whatever
// back-pressure the engine applies is visible to clients (429/503 + Retry-After), never inside a workflow.
// burst-follower.ts follows them through the index.
/* global setInterval, clearInterval */
import { mapPool } from "../../scripts/lib/async.ts";
import type { ShepherdClient } from "./client.ts";
import type { SoakWorkflow } from "./definitions.ts";
import type { RemoteFaults } from "./faults.ts";
import { followBurst } from "./burst-follower.ts";
import type { BurstFollow, BurstResult, FollowCounts } from "./burst-follower.ts";
import { newResult } from "./results.ts";
import { rotation } from "./rotation.ts";
import { BACK_PRESSURE_STATUSES, startUntilAccepted } from "./starts.ts";
import { buildWorkflows } from "./workload.ts";

export const BURST_KIND = "burst";
/** Three steps, not 3–5: the burst is about the queue's backlog, and the CI machine has two cores. */
export const BURST_STEPS = 3;

/** What the front door did with the burst and how it ended, for the report. */
export interface BurstSummary extends FollowCounts {
  size: number;
  steps: number;
  clients: number;
  startedAt: number;
  lastStartAt: number | null;
  startsDone: boolean;
  started: number;
  terminal: number;
  /** From the first request to the last accepted start: how long the front door took to take them all. */
  startMs: number | null;
  startTries: number;
  backPressure: Record<string, number>;
  backPressureTotal: number;
  retryAfterMs: { min: number; max: number; n: number } | null;
  /** Answers that were neither accepted nor back-pressure, e.g. no answer during the restart. */
  otherStartStatuses: Record<string, number>;
}

export interface BurstRun {
  results: BurstResult[];
  summary: BurstSummary | null;
}

export interface BurstCounts {
  started: number;
  terminal: number;
  backPressure: number;
  total: number;
}

export interface BurstDrive {
  client: ShepherdClient;
  workflows: SoakWorkflow[];
  clients: number;
  deadline: number;
  paused: () => boolean;
  onProgress?: (counts: BurstCounts) => void;
  /** The starts begin once this resolves (the bulk family's starts: lib/soak.ts). */
  after?: Promise<unknown>;
}

export interface Burst {
  done: Promise<BurstRun>;
  /** Resolves once the last start was answered (the backlog is at its peak then). */
  allStarted: Promise<{ size: number }>;
  counts: () => BurstCounts;
  /** Up to n open workflows, rotating, for the alarm sampler. */
  openSample: (n: number) => string[];
}

/** The starts' side of the burst: when they began and ended. */
interface Starts {
  startedAt: number;
  lastStartAt: number | null;
  startsDone: boolean;
}

/** The burst's workflows: like the soak's (same remote, faults, retry policy; no scheduleToStartMs), 3 steps. */
export function buildBurstWorkflows({ seed, count, remoteUrl, remoteFaults }: { seed: string; count: number; remoteUrl: string; remoteFaults: Readonly<RemoteFaults> }): SoakWorkflow[] {
  return buildWorkflows({ seed, count, remoteUrl, remoteFaults, kind: BURST_KIND, minSteps: BURST_STEPS, maxSteps: BURST_STEPS });
}

/**
 * Starts every burst workflow at once from `clients` concurrent clients (each honouring Retry-After), then
 * follows them to a terminal status until `deadline`. Skips follower rounds while `paused()` (the restart).
 */
export function driveBurst({ client, workflows, clients, deadline, paused, onProgress, after = Promise.resolve() }: BurstDrive): Burst {
  const results = new Map(workflows.map((wf): [string, BurstResult] => [wf.id, { ...newResult(wf.id, BURST_KIND), lastReadAt: 0 }]));
  const starts: Starts = { startedAt: Date.now(), lastStartAt: null, startsDone: false };
  const name = workflows[0]?.payload.definition.name ?? `chaos-${BURST_KIND}`;
  const follow: BurstFollow = { client, name, results, open: new Set(), counts: { followRounds: 0, indexPages: 0, objectReads: 0, indexErrors: 0 }, deadline, paused, startsDone: () => starts.startsDone };
  const counts = (): BurstCounts => countBurst(results);
  const allStarted = after.then(() => {
    starts.startedAt = Date.now();
    return startAll(follow, workflows, clients, starts);
  });
  const progress = setInterval(() => onProgress?.(counts()), 5_000);
  const done = Promise.all([allStarted, followBurst(follow)])
    .finally(() => clearInterval(progress))
    .then(() => ({ results: [...results.values()], summary: summarizeBurst(workflows.length, clients, starts, follow.counts, [...results.values()]) }));
  const sample = rotation();
  return { done, allStarted, counts, openSample: (n) => sample([...follow.open], n) };
}

async function startAll({ client, results, open, deadline }: BurstFollow, workflows: SoakWorkflow[], clients: number, starts: Starts): Promise<{ size: number }> {
  await mapPool(workflows, clients, async (wf: SoakWorkflow) => {
    const result = results.get(wf.id);
    if (!result) return;
    result.started = await startUntilAccepted(client, wf.payload, result, { deadline });
    if (!result.started) return;
    starts.lastStartAt = Date.now();
    open.add(wf.id);
  });
  starts.startsDone = true;
  return { size: workflows.length };
}

function countBurst(results: Map<string, BurstResult>): BurstCounts {
  let started = 0;
  let terminal = 0;
  let backPressure = 0;
  for (const r of results.values()) {
    if (r.started) started += 1;
    if (r.terminal) terminal += 1;
    for (const n of Object.values(r.backPressure ?? {})) backPressure += n;
  }
  return { started, terminal, backPressure, total: results.size };
}

function summarizeBurst(size: number, clients: number, starts: Starts, counts: FollowCounts, list: BurstResult[]): BurstSummary {
  const backPressure = mergeCounts(list.map((r) => r.backPressure ?? {}), () => true);
  const retryAfterMs = list.flatMap((r) => r.retryAfterMs ?? []);
  return {
    size, steps: BURST_STEPS, clients, ...starts, ...counts,
    started: list.filter((r) => r.started).length,
    terminal: list.filter((r) => r.terminal).length,
    startMs: starts.lastStartAt === null ? null : starts.lastStartAt - starts.startedAt,
    startTries: list.reduce((sum, r) => sum + r.startTries, 0),
    backPressure,
    backPressureTotal: Object.values(backPressure).reduce((sum, n) => sum + n, 0),
    retryAfterMs: retryAfterMs.length ? { min: retryAfterMs.reduce((a, b) => Math.min(a, b)), max: retryAfterMs.reduce((a, b) => Math.max(a, b)), n: retryAfterMs.length } : null,
    otherStartStatuses: mergeCounts(list.map((r) => r.startStatuses), (status) => !["200", "201"].includes(status) && !BACK_PRESSURE_STATUSES.has(Number(status))),
  };
}

function mergeCounts(tables: Record<string, number>[], keep: (key: string) => boolean): Record<string, number> {
  const merged: Record<string, number> = {};
  for (const table of tables) {
    for (const [key, n] of Object.entries(table)) if (keep(key)) merged[key] = (merged[key] ?? 0) + n;
  }
  return merged;
}
