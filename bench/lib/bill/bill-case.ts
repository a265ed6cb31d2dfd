// The bill case: for each step shape (a remote that answers at once, one that takes 2 s, one that answers 202 and
// reports later on the task token), W workflows of 5 steps on one engine, started at once; then what the engine's
// own `wrangler dev` traced of them (trace-counts.ts) and workerd's CPU, per step. The harness's status reads are
// left out of both. The figures are flat (`<shape>.<count>`), as every outcome's are; model.ts prices them.
import { mapPool, sleep } from "../../../scripts/lib/async.ts";
import type { Engine } from "../engines/engine.ts";
import { cpuPerStatusRead, waitForLastSteps, watchRemote } from "../load-phases.ts";
import { cpuMs } from "../proc-readings.ts";
import type { Outcome } from "../results.ts";
import { newStartTally, startWithBackPressure } from "../starts.ts";
import { readUntilTerminal } from "../throughput.ts";
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS, idFor, STEPS_PER_WORKFLOW, stepsFor } from "../workload.ts";
import type { BenchContext } from "../workload.ts";
import { countSpans, spansToCount } from "./trace-counts.ts";
import type { TraceCounts } from "./trace-counts.ts";
import { traceStore } from "./trace-store.ts";
import type { Span } from "./trace-store.ts";

/** The three shapes of a step, and the remote path of each (the callback's names the engine to report to). */
export const STEP_SHAPES = [
  { name: "instant", label: "the remote answers at once", path: () => "/ok" },
  { name: "slow", label: "the remote answers after 2 s", path: () => "/slow?ms=2000" },
  { name: "callback", label: "the remote answers 202, then reports on the task token", path: (engine: Engine) => `/callback?to=${encodeURIComponent(engine.origin)}` },
] as const;

export type ShapeName = (typeof STEP_SHAPES)[number]["name"];

/** Spans close a little after the work they trace; the store is read once they have. */
const SETTLE_MS = 1_000;

export interface BillRun {
  tag: string;
  workflows: number;
  concurrency: number;
  timeoutMs: number;
}

/** Every shape on one engine, one after the other. */
export async function bill(ctx: BenchContext, engine: Engine, run: BillRun): Promise<Outcome> {
  const outcome: Outcome = { stepsPerWorkflow: STEPS_PER_WORKFLOW };
  for (const shape of STEP_SHAPES) {
    const figures = await billShape(ctx, engine, shape, { ...run, tag: `${run.tag}-${shape.name}` });
    for (const [key, value] of Object.entries(figures)) outcome[`${shape.name}.${key}`] = value;
  }
  return outcome;
}

/** The harness's own reads of a workflow's status, which a user need not make, are not the step's bill. */
export const isStatusRead = (root: Span): boolean => root.attributes["http.request.method"] === "GET";

async function billShape(ctx: BenchContext, engine: Engine, shape: (typeof STEP_SHAPES)[number], run: BillRun): Promise<Record<string, number>> {
  const store = traceStore(engine.origin);
  await store.clear();
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
    const { outcomes, reads } = await readUntilTerminal(engine, ids, run.concurrency, deadline);
    const completed = [...outcomes.values()].filter((status) => status.completed).length;
    if (completed < ids.length) throw new Error(`${engine.label}: ${shape.name}: ${completed} of ${ids.length} workflows completed (${tally.firstError ?? "no start failed"})`);
    const cpuRun = cpuMs(pids) - cpuBefore;
    const cpuPerRead = await cpuPerStatusRead(engine, pids, ids, run.concurrency);
    await sleep(SETTLE_MS);
    const counts = countSpans(spansToCount(await store.spans(), (root) => !isStatusRead(root)));
    return perStep(counts, completed, Math.max(0, cpuRun - cpuPerRead * reads));
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
