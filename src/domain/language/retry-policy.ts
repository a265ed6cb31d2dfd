import { z } from "zod";
import type { RetryPolicyInput, TimeoutsInput } from "./schemas";

/** A policy with every default applied, as the scheduler stores it. */
export const ResolvedRetryPolicySchema = z.object({
  maxAttempts: z.number(),
  initialIntervalMs: z.number(),
  backoffCoefficient: z.number(),
  maxIntervalMs: z.number(),
  jitter: z.number(),
});

export const ResolvedTimeoutsSchema = z.object({
  /** Absent unless the definition sets it: an attempt may wait in the queue as long as the queue needs. */
  scheduleToStartMs: z.number().optional(),
  startToCloseMs: z.number(),
  heartbeatMs: z.number(),
  /** Absent unless set: no stall detection. */
  progressMs: z.number().optional(),
});

export type RetryPolicy = z.infer<typeof ResolvedRetryPolicySchema>;
export type Timeouts = z.infer<typeof ResolvedTimeoutsSchema>;

/** The contract's defaults; a step's own values win over the definition's `defaults`, which win over these. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 3,
  initialIntervalMs: 1000,
  backoffCoefficient: 2,
  maxIntervalMs: 60_000,
  jitter: 0.2,
};

export const DEFAULT_TIMEOUTS: Timeouts = {
  startToCloseMs: 300_000,
  heartbeatMs: 30_000,
};

export function resolveRetryPolicy(...layers: (RetryPolicyInput | undefined)[]): RetryPolicy {
  return Object.assign({}, DEFAULT_RETRY, ...layers.map(stripUndefined)) as RetryPolicy;
}

export function resolveTimeouts(...layers: (TimeoutsInput | undefined)[]): Timeouts {
  return Object.assign({}, DEFAULT_TIMEOUTS, ...layers.map(stripUndefined)) as Timeouts;
}

function stripUndefined<T extends object>(value: T | undefined): Partial<T> {
  if (!value) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Delay before retry number `retry` (1 = the first retry).
 * Exponential with jitter so that many workflows failing together do not retry in lockstep; a remote's
 * `Retry-After` lengthens the delay but never past `maxIntervalMs`, so a hostile header cannot park a step.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  retry: number,
  random: () => number,
  retryAfterMs?: number,
): number {
  const exponential = policy.initialIntervalMs * Math.pow(policy.backoffCoefficient, Math.max(0, retry - 1));
  const jittered = exponential * (1 + policy.jitter * (2 * random() - 1));
  const base = Math.max(jittered, retryAfterMs ?? 0);
  return Math.round(Math.min(Math.max(0, base), policy.maxIntervalMs));
}
