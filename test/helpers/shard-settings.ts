// How a shard-count setting (TASK_QUEUE_SHARDS, INDEX_SHARDS) is read when wrangler.toml binds two of the
// resource: the raw value and the count it gives.
export const SHARD_SETTING_CASES: [string | undefined, number][] = [
  [undefined, 1],
  ["1", 1],
  ["2", 2],
  ["3", 2],
  ["100", 2],
  ["0", 1],
  ["-2", 1],
  ["1.5", 1],
  ["many", 1],
  ["", 1],
];
