/**
 * The circuit breaker's settings as a plan carries them, and the host a breaker is kept for. Pure: the plan
 * resolves the settings, the claim names the host, and the agent hands both to the host's breaker.
 */
import { z } from "zod";
import type { BreakerSettingsInput } from "../language/schemas";

/** Settings with every default applied. */
export const ResolvedBreakerSchema = z.object({
  failures: z.number(),
  openMs: z.number(),
});

export type BreakerSettings = z.infer<typeof ResolvedBreakerSchema>;

/** The contract's defaults: open after 5 transient failures in a row, for 30 s at first. */
export const DEFAULT_BREAKER: BreakerSettings = { failures: 5, openMs: 30_000 };

/** However often a breaker re-opens, it stays open at most this long at a time (the doubling stops here). */
export const MAX_OPEN_MS = 300_000;

/**
 * A step's own settings win over the definition's `defaults`, field by field. Undefined when neither sets any:
 * the plan then leaves the field out and the claim applies DEFAULT_BREAKER, so plans stay as they were.
 */
export function resolveBreaker(...layers: (BreakerSettingsInput | undefined)[]): BreakerSettings | undefined {
  const set = layers.filter((layer): layer is BreakerSettingsInput => layer !== undefined);
  if (set.length === 0) return undefined;
  const merged: BreakerSettings = { ...DEFAULT_BREAKER };
  for (const layer of set) {
    if (layer.failures !== undefined) merged.failures = layer.failures;
    if (layer.openMs !== undefined) merged.openMs = layer.openMs;
  }
  return merged;
}

/**
 * Which breaker an attempt to `url` answers to: the URL's host (name and, when it is not the scheme's default,
 * port), in lower case. Undefined for a URL that does not parse: the agent refuses that request anyway.
 */
export function breakerHostOf(url: string): string | undefined {
  try {
    const host = new URL(url).host.toLowerCase();
    return host === "" ? undefined : host;
  } catch {
    return undefined;
  }
}
