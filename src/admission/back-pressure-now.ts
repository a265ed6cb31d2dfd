import { backPressureLagMs } from "../config";
import { admission, backPressure, type BackPressure, type QueueGauge } from "../domain/admission/back-pressure";
import type { FairShareKey } from "../domain/admission/fair-share";
import { currentQueueGauge } from "./queue-lag-monitor";

/**
 * The queues' gauge as last reported, the bound, and what the front door makes of them now: for `key`'s start
 * (refused only while its tenant and name are among those filling the queues), or for the queues as a whole.
 */
export async function backPressureNow(env: Env, key?: FairShareKey): Promise<QueueGauge & { boundMs: number; verdict: BackPressure }> {
  const now = Date.now();
  const gauge = await currentQueueGauge(env, now);
  const boundMs = backPressureLagMs(env);
  const verdict = key ? admission(gauge, key, now, boundMs) : backPressure(gauge.sample, now, boundMs);
  return { ...gauge, boundMs, verdict };
}
