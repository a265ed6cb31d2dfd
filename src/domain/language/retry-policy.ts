import { z } from "zod";
import type { RetryPolicyInput, TimeoutsInput } from "./schemas";

/** A policy with every default applied, as the scheduler stores it; a status list only when one was set. */
export const ResolvedRetryPolicySchema = z.object({
  maxAttempts: z.number(),
  initialIntervalMs: z.number(),
  backoffCoefficient: z.number(),
  maxIntervalMs: z.number(),
  jitter: z.number(),
  retryableStatuses: z.array(z.number()).optional(),
  nonRetryableStatuses: z.array(z.number()).optional(),
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

/**
 * The definition's `defaults.retry`, then the step's own, over the contract's defaults: each field of a later
 * layer replaces the earlier one, a status list included (lists are not merged). A status a later layer lists
 * leaves the other list it inherited, so a step's `retryableStatuses: [409]` wins over a default's
 * `nonRetryableStatuses: [409]` (within one layer, a status in both lists is refused by the schema).
 */
export function resolveRetryPolicy(...layers: (RetryPolicyInput | undefined)[]): RetryPolicy {
  let policy: RetryPolicy = { ...DEFAULT_RETRY };
  for (const layer of layers.map(stripUndefined)) {
    policy = { ...policy, ...layer };
    if (layer.retryableStatuses) policy = withoutStatuses(policy, "nonRetryableStatuses", layer.retryableStatuses);
    if (layer.nonRetryableStatuses) policy = withoutStatuses(policy, "retryableStatuses", layer.nonRetryableStatuses);
  }
  return policy;
}

function withoutStatuses(policy: RetryPolicy, list: "retryableStatuses" | "nonRetryableStatuses", statuses: readonly number[]): RetryPolicy {
  const kept = policy[list]?.filter((status) => !statuses.includes(status));
  if (kept === undefined) return policy;
  return { ...policy, [list]: kept };
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
