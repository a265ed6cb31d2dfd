// The engine's own view of its queue, through the dev-only GET /dev/dispatch → {lagMs, reportedAt, boundMs,
// backPressure}: how far behind dispatch is, and whether the front door is pushing back. Sampled during the
// soak so the report can put the lag next to the back-pressure clients saw. A build without the route
// answers 404 once and is not asked again ("n/a" in the report).
import { sampleEvery } from "../../scripts/lib/async.ts";
import type { ShepherdClient } from "./client.ts";

/** What the samples showed: the maximum lag and when, the bound, how often back-pressure was on. */
export interface DispatchSamples {
  available: boolean | null;
  missingStatus: number | null;
  samples: number;
  maxLagMs: number | null;
  /** Since the soak's start. */
  maxLagAtMs: number | null;
  boundMs: number | null;
  backPressureSamples: number;
  series: { atMs: number; lagMs: number; backPressure: boolean }[];
}

/** Enough for a 20-minute run at one sample per 2 s; later samples still count in the maxima. */
const MAX_SERIES = 600;

export function startDispatchSampler({ client, paused, origin = Date.now(), intervalMs = 2_000 }: { client: ShepherdClient; paused: () => boolean; origin?: number; intervalMs?: number }): { state: DispatchSamples; stop(): Promise<DispatchSamples> } {
  const state: DispatchSamples = { available: null, missingStatus: null, samples: 0, maxLagMs: null, maxLagAtMs: null, boundMs: null, backPressureSamples: 0, series: [] };
  const sampler = sampleEvery(intervalMs, async () => {
    if (paused()) return undefined;
    const res = await client.getDevDispatch();
    if (res.status === 404) {
      state.available = false;
      state.missingStatus = 404;
      return false;
    }
    // No answer (the restart) or a 5xx says nothing about the route; ask again next time.
    if (res.status !== 200 || !res.value) return undefined;
    state.available = true;
    state.samples += 1;
    const at = Date.now() - origin;
    const { lagMs, boundMs, backPressure } = res.value;
    if (state.maxLagMs === null || lagMs > state.maxLagMs) {
      state.maxLagMs = lagMs;
      state.maxLagAtMs = at;
    }
    if (typeof boundMs === "number") state.boundMs = boundMs;
    if (backPressure) state.backPressureSamples += 1;
    if (state.series.length < MAX_SERIES) state.series.push({ atMs: at, lagMs, backPressure: Boolean(backPressure) });
    return undefined;
  });
  return { state, stop: () => sampler.stop().then(() => state) };
}
