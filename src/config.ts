/**
 * The deployment's settings, read from the environment in one place. Parsed values are cached per raw
 * value, so a request pays for parsing only when the setting changed.
 */
import { allowedHostsFor, parseAllowedTargets, type ParsedAllowedTargets } from "./domain/allowed-targets";
import type { TargetPolicy } from "./domain/targets";

/** A setting that is present but unusable; the front door answers 503 `not_configured`. */
export class ConfigError extends Error {}

let allowedTargetsCache: { raw: unknown; parsed: ParsedAllowedTargets } | undefined;

/** Which targets `tenant`'s actions may call. Throws ConfigError when ALLOWED_TARGETS is malformed (fail closed). */
export function targetPolicyFor(env: Env, tenant: string): TargetPolicy {
  const raw: unknown = env.ALLOWED_TARGETS;
  const parsed = allowedTargetsCache && allowedTargetsCache.raw === raw ? allowedTargetsCache.parsed : parseAllowedTargets(raw);
  allowedTargetsCache = { raw, parsed };
  if (!parsed.ok) throw new ConfigError(parsed.problem);
  return { allowPrivate: env.ALLOW_PRIVATE_TARGETS === "true", allowedHosts: allowedHostsFor(parsed.value, tenant) };
}

const DEFAULT_SWEEP_GRACE_MS = 60_000;

/** How far past its indexed deadline a workflow must be before the sweep wakes its object. */
export function sweepGraceMs(env: Env): number {
  const value = Number(env.SWEEP_GRACE_MS);
  return env.SWEEP_GRACE_MS !== undefined && Number.isFinite(value) && value >= 0 ? value : DEFAULT_SWEEP_GRACE_MS;
}
