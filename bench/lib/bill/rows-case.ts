// The rows case: where the SQLite rows written go. For each size, a few workflows of that many sequential steps
// against a remote that answers at once; the statements their objects ran, as the engine's own `wrangler dev`
// traced them, grouped by what they write (row-breakdown.ts), per workflow. Flat figures: `<steps>.total`,
// `<steps>.rows|<statement>`, `<steps>.statements|<statement>` and `<steps>.traceCoverage`.
import { mapPool, waitUntil } from "../../../scripts/lib/async.ts";
import type { Engine } from "../engines/engine.ts";
import type { Outcome } from "../results.ts";
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS, idFor, startOrThrow, stepsFor } from "../workload.ts";
import type { BenchContext } from "../workload.ts";
import { isStatusRead, measureWhole, settleTraces } from "./bill-case.ts";
import { rowsWrittenBy } from "./row-breakdown.ts";
import { requestsTo, spansToCount } from "./trace-counts.ts";
import { traceStore } from "./trace-store.ts";

/** Workflows per size: the counts are the same for each, a few only confirm it. */
const WORKFLOWS_PER_SIZE = 3;
/**
 * Reads as rare as this leave the runtime's tail stream room: under a flood of traced reads (a 10 ms poll) it
 * drops events, and the store misses spans of the run.
 */
const READ_EVERY_MS = 500;

export async function rows(ctx: BenchContext, engine: Engine, { tag, sizes }: { tag: string; sizes: readonly number[] }): Promise<Outcome> {
  const outcome: Outcome = { workflowsPerSize: WORKFLOWS_PER_SIZE };
  for (const size of sizes) {
    const figures = await measureWhole(`${engine.label}: rows of ${size}-step workflows`, (attempt) => rowsOfSize(ctx, engine, size, `${tag}-${size}-${attempt}`));
    for (const [key, value] of Object.entries(figures)) outcome[`${size}.${key}`] = value;
  }
  return outcome;
}

/** WORKFLOWS_PER_SIZE workflows of `size` steps: rows written per workflow by statement, and the store's coverage. */
async function rowsOfSize(ctx: BenchContext, engine: Engine, size: number, tag: string): Promise<Record<string, number>> {
  const store = traceStore(engine.origin);
  await store.clear();
  const ids = Array.from({ length: WORKFLOWS_PER_SIZE }, (_, index) => idFor(ctx, tag, index));
  await mapPool(ids, WORKFLOWS_PER_SIZE, async (id) => {
    await startOrThrow(engine, { id, steps: stepsFor(ctx.remote.url, size), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS });
    const status = await waitUntil(async () => {
      const read = await engine.readStatus(id);
      return read.terminal ? read : undefined;
    }, { timeoutMs: 60_000 + size * 1_000, intervalMs: READ_EVERY_MS, what: `${id} ended` });
    if (!status?.completed) throw new Error(`${engine.label}: rows workflow ${id} ended ${status?.state}`);
  });
  await settleTraces(engine, ids, WORKFLOWS_PER_SIZE);
  const spans = spansToCount(await store.spans(), (root) => !isStatusRead(root));
  const keys = ids.flatMap((id) => Array.from({ length: size }, (_, n) => `${id}:s${n + 1}`));
  const remoteRequests = keys.reduce((sum, key) => sum + ctx.remote.requestsFor(key).length, 0);
  const sources = rowsWrittenBy(spans);
  const figures: Record<string, number> = {
    total: sources.reduce((sum, source) => sum + source.rowsWritten, 0) / WORKFLOWS_PER_SIZE,
    traceCoverage: requestsTo(spans, ctx.remote.url) / remoteRequests,
  };
  for (const source of sources) {
    figures[`rows|${source.label}`] = source.rowsWritten / WORKFLOWS_PER_SIZE;
    figures[`statements|${source.label}`] = source.statements / WORKFLOWS_PER_SIZE;
  }
  return figures;
}
