// The rows case: where the SQLite rows written go. For each size, a few workflows of that many sequential steps
// against a remote that answers at once; the statements their objects ran, as the engine's own `wrangler dev`
// traced them, grouped by what they write (row-breakdown.ts), per workflow. Flat figures: `<steps>.total`,
// `<steps>.rows|<statement>` and `<steps>.statements|<statement>`.
import { mapPool, sleep } from "../../../scripts/lib/async.ts";
import type { Engine } from "../engines/engine.ts";
import type { Outcome } from "../results.ts";
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS, idFor, pollUntilTerminal, startOrThrow, stepsFor } from "../workload.ts";
import type { BenchContext } from "../workload.ts";
import { isStatusRead } from "./bill-case.ts";
import { rowsWrittenBy } from "./row-breakdown.ts";
import { spansToCount } from "./trace-counts.ts";
import { traceStore } from "./trace-store.ts";

/** Workflows per size: the counts are the same for each, a few only confirm it. */
const WORKFLOWS_PER_SIZE = 3;
const SETTLE_MS = 1_000;

export async function rows(ctx: BenchContext, engine: Engine, { tag, sizes }: { tag: string; sizes: readonly number[] }): Promise<Outcome> {
  const store = traceStore(engine.origin);
  const outcome: Outcome = { workflowsPerSize: WORKFLOWS_PER_SIZE };
  for (const size of sizes) {
    await store.clear();
    const ids = Array.from({ length: WORKFLOWS_PER_SIZE }, (_, index) => idFor(ctx, `${tag}-${size}`, index));
    await mapPool(ids, WORKFLOWS_PER_SIZE, async (id) => {
      await startOrThrow(engine, { id, steps: stepsFor(ctx.remote.url, size), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS });
      const { status } = await pollUntilTerminal(engine, id, 60_000 + size * 1_000);
      if (!status.completed) throw new Error(`${engine.label}: rows workflow ${id} ended ${status.state}`);
    });
    await sleep(SETTLE_MS);
    const sources = rowsWrittenBy(spansToCount(await store.spans(), (root) => !isStatusRead(root)));
    outcome[`${size}.total`] = sources.reduce((sum, source) => sum + source.rowsWritten, 0) / WORKFLOWS_PER_SIZE;
    for (const source of sources) {
      outcome[`${size}.rows|${source.label}`] = source.rowsWritten / WORKFLOWS_PER_SIZE;
      outcome[`${size}.statements|${source.label}`] = source.statements / WORKFLOWS_PER_SIZE;
    }
  }
  return outcome;
}
