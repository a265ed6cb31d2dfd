// The counters in the D1 index: written with each index row by the version-guarded upsert, summed per tenant.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { IndexEntry } from "../../src/domain/machine/index-entry";
import { emptyMetrics, observeLateness, type WorkflowMetrics } from "../../src/domain/machine/metrics";
import { upsertIndexEntry } from "../../src/workflow-index/d1-index";
import { indexDbFor, tenantIndexDbs } from "../../src/workflow-index/index-shards";
import { readTenantMetrics } from "../../src/workflow-index/metrics-rows";
import { uniqueId } from "../helpers/api";

function counters(fields: Partial<WorkflowMetrics>, lateness: number[] = []): WorkflowMetrics {
  const metrics = { ...emptyMetrics(), ...fields };
  for (const ms of lateness) observeLateness(metrics, ms);
  return metrics;
}

function entry(tenant: string, id: string, fields: Partial<IndexEntry> = {}): IndexEntry {
  return { tenant, id, name: "n", status: "running", createdAt: 1_000, updatedAt: 1_000, nextDeadlineAt: 5_000, version: 1, ...fields };
}

/** As the object's outbox writes an entry and GET /v1/metrics reads a tenant's: through the index's shards. */
const write = (written: IndexEntry) => upsertIndexEntry(indexDbFor(env, written.tenant, written.id), written);
const readFigures = (tenant: string) => readTenantMetrics(tenantIndexDbs(env, tenant), tenant);

describe("the counters in the D1 index", () => {
  it("count a workflow once however often its entry is written (the outbox delivers at least once)", async () => {
    const tenant = uniqueId("tenant");
    const written = entry(tenant, "a", { status: "completed", endedAt: 2_000, version: 5, metrics: counters({ attempts: 3, retries: 2 }, [40]) });

    await write(written);
    await write(written);

    const { totals, started, ended } = await readFigures(tenant);
    expect({ started, ended, attempts: totals.attempts, retries: totals.retries, lateness: totals.lateness.count }).toEqual({ started: 1, ended: 1, attempts: 3, retries: 2, lateness: 1 });
  });

  it("keep a newer version's counters when an older entry arrives late", async () => {
    const tenant = uniqueId("tenant");
    await write(entry(tenant, "a", { version: 9, metrics: counters({ attempts: 4 }) }));
    await write(entry(tenant, "a", { version: 2, metrics: counters({ attempts: 1 }) }));

    expect((await readFigures(tenant)).totals.attempts).toBe(4);
  });

  it("sum every row of the tenant, bucket by bucket, with the largest lateness as the max", async () => {
    const tenant = uniqueId("tenant");
    await write(entry(tenant, "a", { metrics: counters({ attempts: 2, compensations: 1, timeouts: { heartbeat: 1, start_to_close: 0, schedule_to_start: 0, stalled: 2 } }, [5, 700]) }));
    await write(entry(tenant, "b", { status: "needs_attention", metrics: counters({ attempts: 1, escalations: 1 }, [9, 90_000]) }));
    // Written before anything counted: no counters, zeros in the row.
    await write(entry(tenant, "c"));
    await write(entry(uniqueId("elsewhere"), "a", { metrics: counters({ attempts: 50 }, [1]) }));

    const figures = await readFigures(tenant);

    expect(figures.byStatus).toMatchObject({ running: 2, needs_attention: 1, completed: 0 });
    expect(figures.totals).toEqual({
      attempts: 3,
      retries: 0,
      timeouts: { heartbeat: 1, start_to_close: 0, schedule_to_start: 0, stalled: 2 },
      compensations: 1,
      escalations: 1,
      lateness: { buckets: [2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1], count: 4, sumMs: 90_714, maxMs: 90_000 },
    });
  });

  it("read zeros for a tenant with no workflows", async () => {
    const figures = await readFigures(uniqueId("nobody"));

    expect(figures.started).toBe(0);
    expect(Object.values(figures.byStatus).every((n) => n === 0)).toBe(true);
    expect(figures.totals.lateness).toEqual({ buckets: new Array(13).fill(0), count: 0, sumMs: 0, maxMs: 0 });
  });
});
