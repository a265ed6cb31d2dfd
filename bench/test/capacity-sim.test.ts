// The capacity calculator reads the sharded bindings' counts from wrangler.toml as src/config.ts counts them.
// Plain Node (the bench is a Node tool, outside the Workers test projects): `node --test bench/test/*.test.ts`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { indexShardsConfigured, taskQueuesConfigured } from "../lib/capacity/configuration.ts";
import type { CapacityInputs } from "../lib/capacity/limits.ts";
import { simulate } from "../lib/capacity/model.ts";
import { renderReport } from "../lib/capacity/report.ts";

/** A wrangler.toml in miniature: [vars] with `vars`, then the D1 databases `databases` binds. */
function toml(vars: string, databases: string[]): string {
  const blocks = databases.map((binding) => `[[d1_databases]]\nbinding = "${binding}"\ndatabase_name = "x"\nmigrations_dir = "migrations"\n`);
  return `name = "shepherd"\n\n[vars]\n${vars}\n\n[[queues.producers]]\nbinding = "TASKS"\nqueue = "q"\n\n${blocks.join("\n")}`;
}

describe("indexShardsConfigured", () => {
  it("uses 1 database when INDEX_SHARDS is absent, however many are bound", () => {
    assert.deepEqual(indexShardsConfigured(toml('ALLOW_PRIVATE_TARGETS = "false"', ["DB", "DB_1", "DB_2"])), { indexShards: 1, indexShardsBound: 3 });
  });

  it("uses INDEX_SHARDS databases, never more than are bound, and a gap ends the count", () => {
    assert.deepEqual(indexShardsConfigured(toml('INDEX_SHARDS = "2"', ["DB", "DB_1", "DB_2"])), { indexShards: 2, indexShardsBound: 3 });
    assert.deepEqual(indexShardsConfigured(toml('INDEX_SHARDS = "8"', ["DB", "DB_1"])), { indexShards: 2, indexShardsBound: 2 });
    assert.deepEqual(indexShardsConfigured(toml('INDEX_SHARDS = "8"', ["DB", "DB_2"])), { indexShards: 1, indexShardsBound: 1 });
  });

  it("falls back to 1 for a value that is not a whole number of at least 1", () => {
    for (const raw of ['"0"', '"-1"', '"1.5"', '"many"', '""']) {
      assert.equal(indexShardsConfigured(toml(`INDEX_SHARDS = ${raw}`, ["DB", "DB_1"])).indexShards, 1, raw);
    }
  });

  it("ignores INDEX_SHARDS outside [vars] and DB names in comments", () => {
    const text = `${toml("", ["DB", "DB_1"])}\n# bind DB_2 to shepherd-index-2\n[other]\nINDEX_SHARDS = "2"\n`;
    assert.deepEqual(indexShardsConfigured(text), { indexShards: 1, indexShardsBound: 2 });
  });

  it("reads the repository's wrangler.toml: DB and DB_1 bound, one used (npm start's default)", () => {
    const text = readFileSync(fileURLToPath(import.meta.resolve("../../wrangler.toml")), "utf8");
    assert.deepEqual(indexShardsConfigured(text), { indexShards: 1, indexShardsBound: 2 });
    assert.deepEqual(taskQueuesConfigured(text), { taskQueues: 1, taskQueuesBound: 2 });
  });
});

describe("the report's D1 section", () => {
  const d1Line = (input: Partial<CapacityInputs>): string => renderReport(simulate(input, {}), {}).split("\n").find((line) => line.includes("index shard(s)")) ?? "";

  it("says how many index shards the configuration uses against how many the load needs, and what to raise", () => {
    const result = simulate({ indexShards: 1, indexShardsBound: 2 }, {});
    assert.equal(result.d1.configured, 1);
    assert.equal(result.d1.bound, 2);
    assert.match(d1Line({ indexShards: 1, indexShardsBound: 2 }), new RegExp(`needed: ${result.d1.shardsNeeded} index shard\\(s\\).*uses 1 of the 2 bound \\(INDEX_SHARDS: raise it, binding databases up to DB_${result.d1.shardsNeeded - 1}\\)`));
  });

  it("asks for nothing more when the configuration uses enough", () => {
    const small = { inFlight: 100, startsPerSec: 10, indexShards: 2, indexShardsBound: 2 };
    assert.equal(simulate(small, {}).d1.shardsNeeded, 1);
    assert.match(d1Line(small), /uses 2 of the 2 bound \(INDEX_SHARDS\)$/);
  });
});
