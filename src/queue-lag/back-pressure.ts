import { backPressureLagMs } from "../config";
import { backPressure, type BackPressure, type QueueLagSample } from "../domain/back-pressure";
import { currentQueueLag } from "./monitor";

/** The queue's lag as last reported, the bound, and what the front door makes of them now. */
export async function backPressureNow(env: Env): Promise<{ sample: QueueLagSample | undefined; boundMs: number; verdict: BackPressure }> {
  const now = Date.now();
  const sample = await currentQueueLag(env, now);
  const boundMs = backPressureLagMs(env);
  return { sample, boundMs, verdict: backPressure(sample, now, boundMs) };
}
