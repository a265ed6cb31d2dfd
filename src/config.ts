/**
 * The deployment's settings, read from the environment in one place. Parsed values are cached per raw
 * value, so a request pays for parsing only when the setting changed.
 */
import { allowedHostsFor, parseAllowedTargets, type ParsedAllowedTargets, type TargetPolicy } from "./domain/security/target-policy";
import { DEFAULT_BACKPRESSURE_LAG_MS } from "./domain/admission/back-pressure";
import { MAP_ITEMS_CEILING, MAX_MAP_ITEMS } from "./domain/contract";

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

/** A non-negative number of milliseconds from a setting, or the default when it is absent or not one. */
function millisecondsSetting(raw: string | undefined, fallback: number): number {
  const value = Number(raw);
  return raw !== undefined && raw.trim() !== "" && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** A whole number from `min` to `max` from a setting, or the default when it is absent, blank or not one. */
function wholeNumberSetting(raw: string | undefined, min: number, max: number, fallback: number): number {
  const value = Number(raw);
  return raw !== undefined && raw.trim() !== "" && Number.isInteger(value) && value >= min && value <= max ? value : fallback;
}

/** The most items one map may run: MAP_MAX_ITEMS, 1 to MAP_ITEMS_CEILING, else the contract's default. */
export function mapMaxItems(env: Env): number {
  return wholeNumberSetting(env.MAP_MAX_ITEMS, 1, MAP_ITEMS_CEILING, MAX_MAP_ITEMS);
}

/** How far past its indexed deadline a workflow must be before the sweep wakes its object. */
export function sweepGraceMs(env: Env): number {
  return millisecondsSetting(env.SWEEP_GRACE_MS, DEFAULT_SWEEP_GRACE_MS);
}

/** Without TENANT_STARTS_IN_FLIGHT: enough to keep a busy runtime busy, few enough that its queue of work stays short. */
export const DEFAULT_TENANT_STARTS_IN_FLIGHT = 8;

/** How many front-door starts one tenant and workflow name may have in progress at once in one isolate; 0 for no cap. */
export function tenantStartsInFlight(env: Env): number {
  return wholeNumberSetting(env.TENANT_STARTS_IN_FLIGHT, 0, Number.MAX_SAFE_INTEGER, DEFAULT_TENANT_STARTS_IN_FLIGHT);
}

/** How much task-queue lag the front door tolerates before it refuses the new starts of those filling the queue. */
export function backPressureLagMs(env: Env): number {
  return millisecondsSetting(env.BACKPRESSURE_LAG_MS, DEFAULT_BACKPRESSURE_LAG_MS);
}

/**
 * START_HAND_OFF: whether a workflow's object hands attempts straight to an agent host that has room (default): a
 * start's first attempts and the supervisor's retries, instead of sending them through the task queue. "false"
 * sends every attempt through the queue.
 */
export function startHandOff(env: Env): boolean {
  return env.START_HAND_OFF !== "false";
}

/** How many AgentHost objects share the remote calls; enough that no one object's limits bound the agents. */
export const DEFAULT_AGENT_HOST_SHARDS = 64;
const MAX_AGENT_HOST_SHARDS = 10_000;

/**
 * AGENT_HOST_SHARDS, a whole number from 1 to 10 000 (default 64). Hosts hold no state, so changing it between
 * deployments is safe: an attempt under way finishes where it runs, the next one goes where the new count says.
 */
export function agentHostShards(env: Env): number {
  return wholeNumberSetting(env.AGENT_HOST_SHARDS, 1, MAX_AGENT_HOST_SHARDS, DEFAULT_AGENT_HOST_SHARDS);
}

/** Binding `shard` (0, 1, ...) of a sharded resource, as wrangler.toml names them: BASE, then BASE_1, BASE_2 ... */
function shardBinding<T>(env: Env, base: string, shard: number): T | undefined {
  const bindings = env as unknown as Record<string, T | undefined>;
  return bindings[shard === 0 ? base : `${base}_${shard}`];
}

/**
 * How many shards a setting asks for: a whole number from 1 (the default) up to the bindings there are, since
 * nothing can go to a queue or a database the Worker has no binding for. The count stops at the first gap.
 */
function boundShards(setting: string | undefined, bound: (shard: number) => unknown): number {
  const value = Number(setting);
  const wanted = Number.isInteger(value) && value >= 1 ? value : 1;
  let shards = 1;
  while (shards < wanted && bound(shards) !== undefined) shards += 1;
  return shards;
}

/** The binding of task queue `shard`: TASKS, then TASKS_1, TASKS_2 ... */
export function taskQueueBinding(env: Env, shard: number): Queue | undefined {
  return shardBinding<Queue>(env, "TASKS", shard);
}

/** TASK_QUEUE_SHARDS: 1 (the default) up to the task queues bound in wrangler.toml. */
export function taskQueueShards(env: Env): number {
  return boundShards(env.TASK_QUEUE_SHARDS, (shard) => taskQueueBinding(env, shard));
}

/** The D1 database of index shard `shard`: DB, then DB_1, DB_2 ... */
export function indexDatabaseBinding(env: Env, shard: number): D1Database | undefined {
  return shardBinding<D1Database>(env, "DB", shard);
}

/** INDEX_SHARDS: 1 (the default) up to the index databases bound in wrangler.toml. */
export function indexShards(env: Env): number {
  return boundShards(env.INDEX_SHARDS, (shard) => indexDatabaseBinding(env, shard));
}

/**
 * INDEX_SHARDS_PER_TENANT, how many of the index shards one tenant's workflows spread over: 1 up to
 * `indexShards` (the default, and what a larger value means). A list or metrics read asks each of them.
 */
export function indexShardsPerTenant(env: Env): number {
  const shards = indexShards(env);
  const value = Number(env.INDEX_SHARDS_PER_TENANT);
  return Number.isInteger(value) && value >= 1 ? Math.min(value, shards) : shards;
}
