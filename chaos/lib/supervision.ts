// The soak's share of the v1.1 supervisor (contract, "Supervision beyond deadlines"): three small families of
// workflows that run beside the regular soak, its burst and its restart. Stalls (lib/stall.ts): an agent
// that heartbeats on without progress. Lost answers (lib/lost-answers.ts): an effect that landed without its
// answer, to be found by `verify`. A host down (lib/breaker.ts): a second remote answering 503 for 20 s
// under a batch of workflows, for the circuit breaker. How many of each, when each stalling and lost-answer
// workflow starts and when the host goes down are the seed's alone (their own salt: the other families'
// workflows are the same as without them).
import { seededRandom } from "./faults.ts";
import { buildBreakerBatch, runBreakerScenario } from "./breaker.ts";
import type { BreakerRun, SecondHost } from "./breaker.ts";
import type { ShepherdClient } from "./client.ts";
import type { SoakWorkflow } from "./definitions.ts";
import { buildLostAnswerWorkflows } from "./lost-answers.ts";
import type { WorkflowResult } from "./results.ts";
import { rotation } from "./rotation.ts";
import { driveFamily } from "./scenario-driver.ts";
import { buildStallWorkflows } from "./stall.ts";

type Range = readonly [number, number];

interface FamilyRanges {
  stalls: Range;
  lostAnswers: Range;
  batch: Range;
  startMs: Range;
  outageAtMs: Range;
}

export interface SupervisionPlan {
  stalls: SoakWorkflow[];
  lostAnswers: SoakWorkflow[];
  batch: SoakWorkflow[];
  /** When each stalling and lost-answer workflow starts, after the soak's start. */
  startOffsetMs: Map<string, number>;
  outageAtMs: number;
  workflows: SoakWorkflow[];
}

export interface SupervisionRun {
  results: WorkflowResult[];
  breaker: BreakerRun;
}

export interface SupervisionDrive {
  client: ShepherdClient;
  plan: SupervisionPlan;
  /** The soak's start (epoch ms). */
  origin: number;
  deadline: number;
  secondHost: SecondHost;
  mainHost: string;
  log: (message: string) => void;
}

/**
 * Ranges the seed draws from, per preset. The quick soak's families start in its first 30 s and the host goes
 * down 10–20 s in, so the breaker's batch (about 40 s: two failed probes at 5 and 10 s open, the third after
 * 20 s) is over well before the regular workload, and the CI run takes no longer for them.
 */
const SOAK_RANGES: FamilyRanges = { stalls: [5, 8], lostAnswers: [5, 8], batch: [15, 20], startMs: [1_000, 90_000], outageAtMs: [30_000, 90_000] };
const RANGES: Record<string, FamilyRanges> = {
  quick: { stalls: [3, 4], lostAnswers: [3, 4], batch: [10, 14], startMs: [1_000, 30_000], outageAtMs: [10_000, 20_000] },
  soak: SOAK_RANGES,
};

/** The families and their timing, from the seed: {stalls, lostAnswers, batch, startOffsetMs: id → ms, outageAtMs}. */
export function planSupervision({ seed, preset, remoteUrl, secondHostUrl }: { seed: string; preset: string; remoteUrl: string; secondHostUrl: string }): SupervisionPlan {
  const range = RANGES[preset] ?? SOAK_RANGES;
  const random = seededRandom(seed, "supervision");
  const pick = ([low, high]: Range): number => low + Math.floor(random() * (high - low + 1));
  const stalls = buildStallWorkflows({ seed, count: pick(range.stalls), remoteUrl });
  const lostAnswers = buildLostAnswerWorkflows({ seed, count: pick(range.lostAnswers), remoteUrl });
  const batch = buildBreakerBatch({ seed, count: pick(range.batch), hostUrl: secondHostUrl });
  const outageAtMs = pick(range.outageAtMs);
  const startOffsetMs = new Map([...stalls, ...lostAnswers].map((wf) => [wf.id, pick(range.startMs)]));
  return { stalls, lostAnswers, batch, startOffsetMs, outageAtMs, workflows: [...stalls, ...lostAnswers, ...batch] };
}

/**
 * Runs the three families from `origin` (the soak's start, epoch ms) until they end or `deadline`. Returns
 * `{done, openSample}`: `done` resolves to {results, breaker} (one result per workflow, and what
 * runBreakerScenario saw); `openSample(n)` names up to n workflows in flight, rotating, for the alarm sampler.
 */
export function driveSupervision({ client, plan, origin, deadline, secondHost, mainHost, log }: SupervisionDrive): { done: Promise<SupervisionRun>; openSample: (n: number) => string[] } {
  const open = new Set<string>();
  const callbacks = { onStarted: (id: string) => open.add(id), onEnded: (id: string) => open.delete(id) };
  const startAt = (wf: SoakWorkflow): number => origin + (plan.startOffsetMs.get(wf.id) ?? 0);
  const singles = driveFamily({ client, workflows: [...plan.stalls, ...plan.lostAnswers], startAt, deadline, ...callbacks });
  const breaker = runBreakerScenario({ client, remote: secondHost, mainHost, workflows: plan.batch, outageAt: origin + plan.outageAtMs, deadline, ...callbacks, log });
  const done = Promise.all([singles, breaker]).then(([results, breakerRun]) => ({ results: [...results, ...breakerRun.results], breaker: breakerRun }));
  const sample = rotation();
  return { done, openSample: (n) => sample([...open], n) };
}
