// What wrangler.toml configures that the capacity calculator needs: how many task queues and index databases
// the configuration uses, counted as src/config.ts counts them, and how many are bound.

/** A setting's raw value in wrangler.toml's [vars], or undefined. */
function varOf(tomlText: string, name: string): string | undefined {
  const vars = /^\[vars\]\s*$([\s\S]*?)(?=^\[)/m.exec(tomlText)?.[1] ?? "";
  return new RegExp(`^\\s*${name}\\s*=\\s*"?([^"\\s#]*)"?`, "m").exec(vars)?.[1];
}

/**
 * A sharded binding's count as src/config.ts counts it: the setting `setting` from [vars] (default 1), never more
 * than the bindings `base`, `base_1` ... bound without a gap.
 */
function shardsConfigured(tomlText: string, setting: string, base: string): { configured: number; bound: number } {
  const wanted = Number(varOf(tomlText, setting));
  const bindings = new Set([...tomlText.matchAll(new RegExp(`^\\s*binding\\s*=\\s*"(${base}(?:_\\d+)?)"`, "gm"))].map((match) => match[1]));
  let bound = 1;
  while (bindings.has(`${base}_${bound}`)) bound += 1;
  return { configured: Number.isInteger(wanted) && wanted >= 1 ? Math.min(wanted, bound) : 1, bound };
}

/**
 * How many task queues wrangler.toml's configuration uses, as src/config.ts `taskQueueShards` counts them:
 * TASK_QUEUE_SHARDS from [vars] (default 1), never more than the TASKS, TASKS_1 ... producers bound there.
 */
export function taskQueuesConfigured(tomlText: string): { taskQueues: number; taskQueuesBound: number } {
  const { configured, bound } = shardsConfigured(tomlText, "TASK_QUEUE_SHARDS", "TASKS");
  return { taskQueues: configured, taskQueuesBound: bound };
}

/**
 * How many D1 databases the workflow index uses, as src/config.ts `indexShards` counts them: INDEX_SHARDS from
 * [vars] (default 1), never more than the DB, DB_1 ... databases bound there.
 */
export function indexShardsConfigured(tomlText: string): { indexShards: number; indexShardsBound: number } {
  const { configured, bound } = shardsConfigured(tomlText, "INDEX_SHARDS", "DB");
  return { indexShards: configured, indexShardsBound: bound };
}
