import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { indexShards, indexShardsPerTenant } from "../../src/config";
import type { IndexEntry } from "../../src/domain/machine/index-entry";
import { upsertIndexEntry } from "../../src/workflow-index/d1-index";
import { allIndexDbs, indexDbFor, indexLayoutOf, indexShardOf, tenantIndexDbs, tenantShardsOf } from "../../src/workflow-index/index-shards";
import { api, bearer, start, uniqueId, waitForStatus } from "../helpers/api";
import { uniqueIdOnShard } from "../helpers/index-db";
import { FAST } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { SHARD_SETTING_CASES } from "../helpers/shard-settings";

afterEach(() => vi.restoreAllMocks());

const withSettings = (settings: Partial<Env>): Env => ({ ...env, ...settings });

/** Which binding a database is: bindings are compared by identity, since two of them look alike to toEqual. */
const bindingName = (db: D1Database): string => (db === env.DB ? "DB" : db === env.DB_1 ? "DB_1" : "another");

describe("INDEX_SHARDS", () => {
  // wrangler.toml binds DB and DB_1.
  it.each(SHARD_SETTING_CASES)("%s → %i databases, with two bound", (raw, expected) => {
    expect(indexShards(withSettings({ INDEX_SHARDS: raw }))).toBe(expected);
  });

  it("never counts a database that is not bound: DB_2 counts once it is there, and a gap ends the count", () => {
    const { DB_1: _second, ...onlyFirst } = env;
    expect(indexShards({ ...onlyFirst, INDEX_SHARDS: "2" } as unknown as Env)).toBe(1);
    expect(indexShards(withSettings({ DB_2: env.DB_1, INDEX_SHARDS: "5" } as Partial<Env>))).toBe(3);
    expect(indexShards({ ...onlyFirst, DB_2: env.DB_1, INDEX_SHARDS: "3" } as unknown as Env)).toBe(1);
  });

  it("is 2 in the tests, so the sharded paths are the ones they run", () => {
    expect(indexShards(env)).toBe(2);
    expect(allIndexDbs(env).map(bindingName)).toEqual(["DB", "DB_1"]);
  });

  it.each([
    [undefined, 2],
    ["1", 1],
    ["2", 2],
    ["7", 2],
    ["0", 2],
    ["half", 2],
  ])("INDEX_SHARDS_PER_TENANT %s → a tenant spans %i of the 2 shards", (raw, expected) => {
    expect(indexShardsPerTenant(withSettings({ INDEX_SHARDS_PER_TENANT: raw }))).toBe(expected);
  });

  it("spans one shard per tenant when only one is used, whatever INDEX_SHARDS_PER_TENANT says", () => {
    expect(indexShardsPerTenant(withSettings({ INDEX_SHARDS: "1", INDEX_SHARDS_PER_TENANT: "2" }))).toBe(1);
  });
});

describe("which shard holds a workflow's entry", () => {
  const all = { shards: 2, perTenant: 2 };

  it("gives the same shard every time for the same tenant and workflow", () => {
    for (let n = 0; n < 50; n++) {
      const id = `wf-stable-${n}`;
      expect(new Set(Array.from({ length: 5 }, () => indexShardOf("acme", id, all))).size).toBe(1);
    }
  });

  it("spreads one tenant's workflows over both shards about evenly", () => {
    const counts = [0, 0];
    for (let n = 0; n < 1_000; n++) counts[indexShardOf("acme", `wf-spread-${n}`, all)]! += 1;
    for (const count of counts) expect(count).toBeGreaterThan(400);
  });

  it("keeps each workflow within its tenant's window, and a window of one shard holds all of a tenant's workflows", () => {
    const layouts = [all, { shards: 5, perTenant: 3 }, { shards: 5, perTenant: 1 }, { shards: 1, perTenant: 1 }];
    for (const layout of layouts) {
      for (const tenant of ["acme", "beta", "t-9"]) {
        const window = tenantShardsOf(tenant, layout);
        expect(new Set(window).size).toBe(layout.perTenant);
        for (let n = 0; n < 100; n++) expect(window).toContain(indexShardOf(tenant, `wf-${n}`, layout));
      }
    }
  });

  it("starts tenants' windows on different shards, so tenants that span one shard still use them all", () => {
    const layout = { shards: 4, perTenant: 1 };
    const firsts = new Set(Array.from({ length: 100 }, (_, n) => tenantShardsOf(`tenant-${n}`, layout)[0]));
    expect([...firsts].sort()).toEqual([0, 1, 2, 3]);
  });

  it("names DB for shard 0 and DB_1 for shard 1; with INDEX_SHARDS 1 every entry goes to DB", () => {
    const [onFirst, onSecond] = [uniqueIdOnShard(0, "acme"), uniqueIdOnShard(1, "acme")];
    expect(indexDbFor(env, "acme", onFirst)).toBe(env.DB);
    expect(indexDbFor(env, "acme", onSecond)).toBe(env.DB_1);
    expect(tenantIndexDbs(env, "acme").map(bindingName).sort()).toEqual(["DB", "DB_1"]);
    const single = withSettings({ INDEX_SHARDS: "1" });
    expect([indexDbFor(single, "acme", onFirst), indexDbFor(single, "acme", onSecond)].map(bindingName)).toEqual(["DB", "DB"]);
    expect(tenantIndexDbs(single, "acme").map(bindingName)).toEqual(["DB"]);
    expect(indexLayoutOf(single)).toEqual({ shards: 1, perTenant: 1 });
  });
});

/** The entry of (tenant, id) in each index database: [in DB, in DB_1]. */
async function presence(tenant: string, id: string): Promise<boolean[]> {
  return Promise.all(
    allIndexDbs(env).map(async (db) => (await db.prepare("SELECT 1 AS found FROM workflows WHERE tenant = ? AND id = ?").bind(tenant, id).first()) !== null),
  );
}

describe("the index entries of real workflows", () => {
  it("migrates every bound index database", async () => {
    for (const db of allIndexDbs(env)) {
      const { results } = await db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'workflows'").all();
      expect(results).toHaveLength(1);
    }
  });

  it("writes each workflow's entry to the shard the module names, and to no other", async () => {
    mockRemote(() => json({ ok: true }));
    const ids = [0, 1, 0, 1].map((shard) => uniqueIdOnShard(shard));
    const definition = { name: "placed", defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] };
    await Promise.all(ids.map((id) => start(definition, { id })));
    await Promise.all(ids.map((id) => waitForStatus(id, "completed")));
    for (const id of ids) {
      const shard = indexShardOf("default", id, indexLayoutOf(env));
      await vi.waitFor(async () => {
        const row = await indexDbFor(env, "default", id).prepare("SELECT status FROM workflows WHERE tenant = 'default' AND id = ?").bind(id).first<{ status: string }>();
        expect(row?.status).toBe("completed");
      });
      expect(await presence("default", id)).toEqual([shard === 0, shard === 1]);
    }
  });
});

function entry(tenant: string, id: string, fields: Partial<IndexEntry> = {}): IndexEntry {
  return { tenant, id, name: "n", status: "running", createdAt: 1_000, updatedAt: 1_000, version: 1, ...fields };
}

describe("GET /v1/metrics over the shards", () => {
  it("sums the tenant's rows on both shards, and nothing of another tenant's", async () => {
    const onBoth = [0, 1, 1].map((shard) => uniqueIdOnShard(shard, "beta"));
    const statuses = ["running", "completed", "failed"] as const;
    await Promise.all(
      onBoth.map((id, n) => {
        const written = entry("beta", id, { status: statuses[n]!, version: 3, ...(n > 0 ? { endedAt: 2_000 } : {}), metrics: { attempts: n + 1, retries: n, timeouts: { heartbeat: 0, start_to_close: 0, schedule_to_start: 0, stalled: 0 }, compensations: 0, escalations: 0 } });
        return upsertIndexEntry(indexDbFor(env, "beta", id), written);
      }),
    );
    await upsertIndexEntry(env.DB_1, entry("gamma", uniqueId(), { metrics: { attempts: 99, retries: 0, timeouts: { heartbeat: 0, start_to_close: 0, schedule_to_start: 0, stalled: 0 }, compensations: 0, escalations: 0 } }));

    const response = await api("GET", "/v1/metrics", undefined, { headers: bearer("beta") });

    expect(response.status).toBe(200);
    expect(response.body.workflows).toMatchObject({ started: 3, ended: 2, byStatus: { running: 1, completed: 1, failed: 1 } });
    expect(response.body.steps).toMatchObject({ attempts: 6, retries: 3 });
  });
});
