// How a run goes through its plan: every case on every engine, one engine with work at a time, each
// measurement after a quiet moment, an engine that stopped answering restarted so it keeps its other figures.
import { errorMessage } from "../../scripts/lib/json.ts";
import type { BenchOptions } from "./args.ts";
import type { Engine } from "./engines/engine.ts";
import { waitForQuiet, watchOtherLoad } from "./load.ts";
import { log } from "./log.ts";
import type { PlannedCase } from "./plan.ts";
import type { CaseRecord, Outcome, Results } from "./results.ts";
import type { BenchContext } from "./workload.ts";

/** Waiting for other processes to calm down is bounded over the whole run, not only per measurement. */
const quietBudget = { leftMs: 4 * 60_000 };
/** The engines measured at least once (--fresh restarts them before every measurement but the first). */
const measuredOnce = new WeakSet<Engine>();

/**
 * Runs every case on every engine. Only one engine ever has work at a time. "interleaved" (the default)
 * keeps both engines up and alternates them repeat by repeat (Shepherd first in odd repeats, Workflows first
 * in even ones), so load from other processes on a shared machine falls on both alike; "sequential" runs all
 * of one engine, stops it, then the other.
 */
export async function runAll(engines: readonly Engine[], sharedCtx: BenchContext, options: BenchOptions, results: Results, plan: readonly PlannedCase[]): Promise<void> {
  const run = { sharedCtx, options, results, plan };
  if (options.order === "sequential") {
    for (const engine of engines) {
      await startEngine(engine, results);
      try {
        await runCases([engine], run);
      } finally {
        await stopEngine(engine);
      }
    }
    return;
  }
  try {
    for (const engine of engines) await startEngine(engine, results);
    await runCases(engines, run);
  } finally {
    for (const engine of engines) await stopEngine(engine);
  }
}

async function startEngine(engine: Engine, results: Results): Promise<void> {
  log(`${engine.label}: starting wrangler dev (${engine.source})`);
  await engine.start();
  log(`${engine.label}: ready; workerd pids ${engine.workerdPids().join(", ") || "(none found)"}`);
  results.engines[engine.name] = {};
}

async function stopEngine(engine: Engine): Promise<void> {
  log(`${engine.label}: stopping`);
  await engine.stop();
}

interface Run {
  sharedCtx: BenchContext;
  options: BenchOptions;
  results: Results;
  plan: readonly PlannedCase[];
}

/** Every case, repeat by repeat, on the group's engines in turn; an engine whose repeat failed sits the case out. */
async function runCases(group: readonly Engine[], { sharedCtx, options, results, plan }: Run): Promise<void> {
  // Ids (and so the remote's Idempotency-Keys) are unique per engine: the remote's per-key behaviour
  // (fail once, hang once) and its records must never mix the two engines' requests.
  const ctxOf = (engine: Engine): BenchContext => ({ ...sharedCtx, runTag: `${sharedCtx.runTag}-${engine.name.slice(0, 2)}` });
  for (const planned of plan) {
    const failed = new Set<Engine>();
    for (let rep = 1; rep <= options.repeat; rep++) {
      const order = rep % 2 === 1 ? group : [...group].reverse();
      for (const engine of order) {
        if (failed.has(engine) || !planned.applies(engine, rep)) continue;
        const figures = (results.engines[engine.name] ??= {});
        const ok = await measureOnce(engine, ctxOf(engine), planned, rep, options, figures);
        if (!ok) failed.add(engine);
      }
    }
  }
}

/** One repeat of one case on one engine: wait for a quiet machine, measure, record; restart a dead engine. */
async function measureOnce(engine: Engine, ctx: BenchContext, { name, run }: PlannedCase, rep: number, options: BenchOptions, figures: Record<string, CaseRecord>): Promise<boolean> {
  await freshIfAsked(engine, options);
  log(`${engine.label}: ${name} (repeat ${rep}/${options.repeat})`);
  await waitForQuietMachine(options);
  const otherLoad = watchOtherLoad();
  try {
    const outcome = await run(ctx, engine, rep);
    outcome.otherCpuPct = otherLoad();
    const runs = figures[name];
    figures[name] = Array.isArray(runs) ? [...runs, outcome] : [outcome];
    log(`${engine.label}: ${name}: ${oneLine(outcome)}`);
    return true;
  } catch (error) {
    log(`${engine.label}: ${name} failed: ${errorMessage(error)}`);
    figures[name] = { error: errorMessage(error) };
    if (!(await alive(engine))) {
      // One overloaded case should not cost the engine its other figures: start it again and go on.
      log(`${engine.label}: not answering any more; restarting wrangler dev (log: ${engine.logFile})`);
      await engine.restart();
    }
    return false;
  }
}

/** --fresh: the objects earlier measurements left in memory would weigh on this one: a new runtime on the same state. */
async function freshIfAsked(engine: Engine, options: BenchOptions): Promise<void> {
  if (options.fresh && measuredOnce.has(engine)) {
    log(`${engine.label}: restarting wrangler dev for a fresh runtime (--fresh)`);
    await engine.restart();
  }
  measuredOnce.add(engine);
}

async function waitForQuietMachine(options: BenchOptions): Promise<void> {
  const waitStarted = Date.now();
  const before = await waitForQuiet({ maxWaitMs: Math.min(options.quietWaitS * 1000, quietBudget.leftMs) });
  quietBudget.leftMs = Math.max(0, quietBudget.leftMs - (Date.now() - waitStarted));
  if (before >= 25) log(`other processes use ${before.toFixed(0)} % of a core; measuring anyway`);
}

/** One repeat's figures on one line: rounded, raw samples and the profile's figures (printed on their own) left out. */
function oneLine(outcome: Outcome): string {
  return JSON.stringify(outcome, (key, v: unknown) => (key === "samples" || key === "profile" ? undefined : typeof v === "number" ? Math.round(v * 100) / 100 : v));
}

/** Whether the engine still answers a read within a minute (three tries). */
async function alive(engine: Engine): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      if ((await engine.readStatus("bench-health-probe")).state !== undefined) return true;
    } catch {
      // Timed out or refused: try again.
    }
  }
  return false;
}
