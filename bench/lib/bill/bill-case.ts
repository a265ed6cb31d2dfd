// The bill case: for each step shape (a remote that answers at once, one that takes 2 s, one that answers 202 and
// reports later on the task token), W workflows of 5 steps on one engine, started at once; then what the engine's
// own `wrangler dev` traced of them (trace-counts.ts) and workerd's CPU, per step. The harness's status reads are
// left out of both. The figures are flat (`<shape>.<count>`), as every outcome's are; model.ts prices them.
import { mapPool, sleep, waitUntil } from "../../../scripts/lib/async.ts";
import type { Engine } from "../engines/engine.ts";
import { cpuPerStatusRead, waitForLastSteps, watchRemote } from "../load-phases.ts";
import { cpuMs } from "../proc-readings.ts";
import type { Outcome } from "../results.ts";
import { newStartTally, startWithBackPressure } from "../starts.ts";
import { readUntilTerminal } from "../throughput.ts";
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS, idFor, STEPS_PER_WORKFLOW, stepsFor } from "../workload.ts";
import type { BenchContext } from "../workload.ts";
import { log } from "../log.ts";
import { countSpans, requestsTo, spansToCount } from "./trace-counts.ts";
import type { TraceCounts } from "./trace-counts.ts";
import { traceStore } from "./trace-store.ts";
import type { Span } from "./trace-store.ts";

/** The three shapes of a step, and the remote path of each (the callback's names the engine to report to). */
export const STEP_SHAPES = [
  { name: "instant", label: "the remote answers at once", path: () => "/ok" },
  { name: "slow", label: "the remote answers after 2 s", path: () => "/slow?ms=2000" },
  { name: "callback", label: "the remote answers 202, then reports on the task token", path: (engine: Engine) => `/callback?to=${encodeURIComponent(engine.origin)}` },
] as const;

type Shape = (typeof STEP_SHAPES)[number];
export type ShapeName = Shape["name"];

/**
 * The local runtime ends an alarm's invocation, and only then stores its spans, at the first event its object gets
 * at least about 2 s after the alarm ran. So the store is read after waiting that long, waking every object with
 * one more status read (left out of the counts), and letting the spans land.
 */
const ALARM_LINGER_MS = 3_000;
const SETTLE_MS = 1_000;

/** Waits until the store has the spans of everything the workflows `ids` did (see ALARM_LINGER_MS). */
export async function settleTraces(engine: Engine, ids: readonly string[], concurrency: number): Promise<void> {
  await sleep(ALARM_LINGER_MS);
  await mapPool(ids, concurrency, (id) => engine.readStatus(id).catch(() => undefined));
  await sleep(SETTLE_MS);
}

export interface BillRun {
  tag: string;
  workflows: number;
  concurrency: number;
  timeoutMs: number;
}

/** A measurement whose store missed part of the run is made again, at most this many times in all. */
const TRIES = 3;

/**
 * `measure(try)` again while its `traceCoverage` (the remote's requests the store has spans of) is short of all of
 * them, at most TRIES times; the most complete one is kept, its coverage with it.
 */
export async function measureWhole(what: string, measure: (attempt: number) => Promise<Record<string, number>>): Promise<Record<string, number>> {
  let best: Record<string, number> | undefined;
  for (let attempt = 1; attempt <= TRIES; attempt++) {
    const figures = await measure(attempt);
    if (!best || (figures.traceCoverage ?? 0) > (best.traceCoverage ?? 0)) best = figures;
    if ((figures.traceCoverage ?? 0) >= 1) break;
    log(`${what}: the trace store has ${((figures.traceCoverage ?? 0) * 100).toFixed(1)} % of the run's remote calls (the runtime dropped events)${attempt < TRIES ? "; measuring again" : ""}`);
  }
  return best ?? {};
}

/** Every shape on one engine, one after the other. */
export async function bill(ctx: BenchContext, engine: Engine, run: BillRun): Promise<Outcome> {
  const outcome: Outcome = { stepsPerWorkflow: STEPS_PER_WORKFLOW };
  for (const shape of STEP_SHAPES) {
    const figures = await measureWhole(`${engine.label}: bill ${shape.name}`, (attempt) => billShape(ctx, engine, shape, { ...run, tag: `${run.tag}-${shape.name}-${attempt}` }));
    for (const [key, value] of Object.entries(figures)) outcome[`${shape.name}.${key}`] = value;
  }
  return outcome;
}

/** The harness's own reads of a workflow's status, which a user need not make, are not the step's bill. */
export const isStatusRead = (root: Span): boolean => root.attributes["http.request.method"] === "GET";

async function billShape(ctx: BenchContext, engine: Engine, shape: Shape, run: BillRun): Promise<Record<string, number>> {
  const store = traceStore(engine.origin);
  await store.clear();
  const ran = await runShape(ctx, engine, shape, run);
  await settleTraces(engine, ran.ids, run.concurrency);
  const spans = spansToCount(await store.spans(), (root) => !isStatusRead(root));
  return { ...perStep(countSpans(spans), ran.completed, ran.cpuMs), traceCoverage: requestsTo(spans, ctx.remote.url) / ran.remoteRequests };
}

/** What one shape's run did: its workflows, how many completed, workerd's CPU (the reads' share out), the remote's calls. */
interface ShapeRun {
  ids: string[];
  completed: number;
  cpuMs: number;
  remoteRequests: number;
}

/** The shape's workflows, started at once and followed to their end; throws unless every one completed. */
async function runShape(ctx: BenchContext, engine: Engine, shape: Shape, run: BillRun): Promise<ShapeRun> {
  const pids = engine.workerdPids();
  const progress = watchRemote(ctx.remote, `${ctx.runTag}-${run.tag}-`);
  const deadline = Date.now() + run.timeoutMs;
  const cpuBefore = cpuMs(pids);
  try {
    const ids = Array.from({ length: run.workflows }, (_, index) => idFor(ctx, run.tag, index));
    const tally = newStartTally();
    const steps = stepsFor(ctx.remote.url, STEPS_PER_WORKFLOW, () => shape.path(engine));
    await mapPool(ids, run.concurrency, (id) => startWithBackPressure(engine, { id, steps, retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS }, tally, deadline));
    await waitForLastSteps(progress, ids.length, deadline);
    // Read only once the remote has answered every last step (2 s on, for the slow shape): reads made meanwhile
    // would only be taken out of the CPU again, less exactly.
    const lastAnswered = (): boolean => ids.every((id) => ctx.remote.requestsFor(`${id}:s${STEPS_PER_WORKFLOW}`).some((request) => request.respondedAt !== undefined));
    await waitUntil(lastAnswered, { timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: 50, what: "the remote's answers to the last steps" });
    const { outcomes, reads } = await readUntilTerminal(engine, ids, run.concurrency, deadline);
    const completed = [...outcomes.values()].filter((status) => status.completed).length;
    if (completed < ids.length) throw new Error(`${engine.label}: ${shape.name}: ${completed} of ${ids.length} workflows completed (${tally.firstError ?? "no start failed"})`);
    const cpuRun = cpuMs(pids) - cpuBefore;
    const cpuPerRead = await cpuPerStatusRead(engine, pids, ids, run.concurrency);
    const remoteRequests = [...progress.stepsSeen].reduce((sum, key) => sum + ctx.remote.requestsFor(key).length, 0);
    return { ids, completed, cpuMs: Math.max(0, cpuRun - cpuPerRead * reads), remoteRequests };
  } finally {
    progress.stop();
  }
}

/** The run's counts per step, and per step by what was called (`doRequests.<method>`). */
export function perStep(counts: TraceCounts, workflows: number, cpuRunMs: number): Record<string, number> {
  const steps = workflows * STEPS_PER_WORKFLOW;
  const { doRequestsBy, ...totals } = counts;
  const figures: Record<string, number> = { steps, cpuMs: cpuRunMs / steps, workflowInvocations: workflows / steps };
  for (const [key, value] of Object.entries(totals)) figures[key] = value / steps;
  for (const [method, value] of Object.entries(doRequestsBy)) figures[`doRequests.${method}`] = value / steps;
  return figures;
}
