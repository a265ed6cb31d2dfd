// The per-minute series in D1: what each index write adds to its minute, computed against the row it replaces in the
// same batch, so the outbox's repeated, late and skipped writes still add up to the workflows' counters.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { IndexEntry } from "../../src/domain/machine/index-entry";
import { emptyMetrics, observeLateness, type WorkflowMetrics } from "../../src/domain/machine/metrics";
import type { SeriesCounts } from "../../src/domain/metrics/series-points";
import { upsertIndexEntry } from "../../src/workflow-index/d1-index";
import { allIndexDbs, indexDbFor, tenantIndexDbs } from "../../src/workflow-index/index-shards";
import { pruneMetricsMinutes, readTenantSeries } from "../../src/workflow-index/metrics-series";
import { readTenantMetrics } from "../../src/workflow-index/metrics-rows";
import { recordLagMinutes, readLagSteps } from "../../src/admission/queue-lag-minutes";
import { uniqueId } from "../helpers/api";
import { runCron } from "../helpers/time";

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** A whole minute well in the past, so the steps below are minutes from it. */
const T0 = 1_700_000_040_000;

function counters(fields: Partial<WorkflowMetrics>, lateness: number[] = []): WorkflowMetrics {
  const metrics = { ...emptyMetrics(), ...fields };
  for (const ms of lateness) observeLateness(metrics, ms);
  return metrics;
}

function entry(tenant: string, id: string, fields: Partial<IndexEntry> = {}): IndexEntry {
  return { tenant, id, name: "n", status: "running", createdAt: T0, updatedAt: T0, nextDeadlineAt: T0 + 600_000, version: 1, ...fields };
}

const write = (written: IndexEntry) => upsertIndexEntry(indexDbFor(env, written.tenant, written.id), written);

/** The tenant's minutes from T0, one step per minute, over both shards. */
async function minutes(tenant: string, count = 10): Promise<Map<number, SeriesCounts>> {
  return readTenantSeries(tenantIndexDbs(env, tenant), tenant, { from: T0, to: T0 + count * MINUTE, stepMs: MINUTE, points: count });
}

async function minuteRows(tenant: string): Promise<number> {
  const counts = await Promise.all(allIndexDbs(env).map((db) => db.prepare("SELECT COUNT(*) AS n FROM metrics_minutes WHERE tenant = ?").bind(tenant).first<{ n: number }>()));
  return counts.reduce((sum, row) => sum + (row?.n ?? 0), 0);
}

describe("the per-minute series in D1", () => {
  it("counts a start and an end once however often their entries are written", async () => {
    const tenant = uniqueId("tenant");
    const started = entry(tenant, "a");
    const ended = entry(tenant, "a", { status: "completed", updatedAt: T0 + 2 * MINUTE + 5, endedAt: T0 + 2 * MINUTE + 5, version: 5, metrics: counters({ attempts: 3, retries: 2 }) });

    await write(started);
    await write(started);
    await write(ended);
    await write(ended);

    const steps = await minutes(tenant);
    expect([...steps.keys()].sort()).toEqual([0, 2]);
    expect(steps.get(0)).toMatchObject({ started: 1, ended: { completed: 0 }, figures: { attempts: 0 } });
    expect(steps.get(2)).toMatchObject({ started: 0, ended: { completed: 1, failed: 0 }, figures: { attempts: 3, retries: 2 } });
  });

  it("adds nothing for an older entry that arrives after a newer one", async () => {
    const tenant = uniqueId("tenant");
    await write(entry(tenant, "a", { version: 9, metrics: counters({ attempts: 4 }) }));
    await write(entry(tenant, "a", { version: 2, updatedAt: T0 + MINUTE, metrics: counters({ attempts: 1 }) }));

    const steps = await minutes(tenant);
    expect([...steps.keys()]).toEqual([0]);
    expect(steps.get(0)?.figures.attempts).toBe(4);
  });

  it("adds only what each entry added since the row it replaces, and sums to the counters GET /v1/metrics reads", async () => {
    const tenant = uniqueId("tenant");
    const timeouts = { heartbeat: 1, start_to_close: 0, schedule_to_start: 0, stalled: 0 };
    await write(entry(tenant, "a", { metrics: counters({ attempts: 1 }) }));
    await write(entry(tenant, "a", { version: 3, updatedAt: T0 + 3 * MINUTE, metrics: counters({ attempts: 2, retries: 1, timeouts }, [40]) }));
    await write(entry(tenant, "b", { status: "compensated", updatedAt: T0 + 3 * MINUTE, endedAt: T0 + 3 * MINUTE, metrics: counters({ attempts: 2, compensations: 1 }) }));

    const steps = await minutes(tenant);
    expect(steps.get(0)).toMatchObject({ started: 1, figures: { attempts: 1, retries: 0 } });
    expect(steps.get(3)).toMatchObject({ started: 1, ended: { compensated: 1 }, figures: { attempts: 3, retries: 1, timeouts, compensations: 1 } });
    const { totals } = await readTenantMetrics(tenantIndexDbs(env, tenant), tenant);
    expect((steps.get(0)?.figures.attempts ?? 0) + (steps.get(3)?.figures.attempts ?? 0)).toBe(totals.attempts);
  });

  it("counts each end of a redriven workflow, even when the entry between them never reached D1", async () => {
    const tenant = uniqueId("tenant");
    await write(entry(tenant, "a", { status: "failed", version: 4, endedAt: T0 + 10 }));
    // Redriven, then failed again: the outbox kept only the newest entry, so D1 goes from one failure to the next.
    await write(entry(tenant, "a", { status: "failed", version: 9, updatedAt: T0 + MINUTE, endedAt: T0 + MINUTE }));
    await write(entry(tenant, "a", { status: "failed", version: 9, updatedAt: T0 + MINUTE, endedAt: T0 + MINUTE }));

    const steps = await minutes(tenant);
    expect(steps.get(0)?.ended.failed).toBe(1);
    expect(steps.get(1)?.ended.failed).toBe(1);
  });

  it("keeps the lateness histogram per minute, its max exact for a workflow's new worst and a bucket bound otherwise", async () => {
    const tenant = uniqueId("tenant");
    await write(entry(tenant, "a", { metrics: counters({}, [700]) }));
    await write(entry(tenant, "a", { version: 2, updatedAt: T0 + MINUTE, metrics: counters({}, [700, 30]) }));
    await write(entry(tenant, "a", { version: 3, updatedAt: T0 + 2 * MINUTE, metrics: counters({}, [700, 30, 90_000]) }));

    const steps = await minutes(tenant);
    expect(steps.get(0)?.figures.lateness).toEqual({ buckets: [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0], count: 1, sumMs: 700, maxMs: 700 });
    // 30 ms fell in the 50 ms bucket and did not beat the workflow's 700: the minute knows it was at most 50.
    expect(steps.get(1)?.figures.lateness).toEqual({ buckets: [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], count: 1, sumMs: 30, maxMs: 50 });
    expect(steps.get(2)?.figures.lateness).toMatchObject({ count: 1, sumMs: 90_000, maxMs: 90_000 });
  });

  it("writes no minute for an entry that changes no counter (a lease renewed, the sweep's refresh)", async () => {
    const tenant = uniqueId("tenant");
    const metrics = counters({ attempts: 2 });
    await write(entry(tenant, "a", { metrics }));
    await write(entry(tenant, "a", { version: 2, updatedAt: T0 + MINUTE, nextDeadlineAt: T0 + 900_000, metrics }));
    await write(entry(tenant, "a", { version: 2, updatedAt: T0 + MINUTE, nextDeadlineAt: T0 + 900_000, metrics }));

    expect(await minuteRows(tenant)).toBe(1);
  });

  it("answers steps of several minutes, each the sum of its minutes across both shards", async () => {
    const tenant = uniqueId("tenant");
    for (let i = 0; i < 12; i++) await write(entry(tenant, `w${i}`, { status: "completed", updatedAt: T0 + i * 20_000, endedAt: T0 + i * 20_000, metrics: counters({ attempts: 1 }) }));

    const steps = await readTenantSeries(tenantIndexDbs(env, tenant), tenant, { from: T0, to: T0 + 4 * MINUTE, stepMs: 2 * MINUTE, points: 2 });

    expect(steps.get(0)).toMatchObject({ started: 6, ended: { completed: 6 }, figures: { attempts: 6 } });
    expect(steps.get(1)).toMatchObject({ started: 6, ended: { completed: 6 }, figures: { attempts: 6 } });
  });

  it("are deleted by the minute's cron once older than 14 days, with the queues' lag", async () => {
    const tenant = uniqueId("tenant");
    const now = Date.now();
    const [old, kept] = [now - 15 * DAY, now - 13 * DAY];
    await write(entry(tenant, "old", { updatedAt: old, metrics: counters({ attempts: 1 }) }));
    await write(entry(tenant, "kept", { updatedAt: kept, metrics: counters({ attempts: 2 }) }));
    await recordLagMinutes(env.DB, [{ minuteAt: Math.floor(old / MINUTE) * MINUTE, lagMs: 900 }, { minuteAt: Math.floor(kept / MINUTE) * MINUTE, lagMs: 800 }]);

    await runCron(now);

    const range = { from: Math.floor(old / MINUTE) * MINUTE, to: now, stepMs: DAY, points: 15 };
    const steps = await readTenantSeries(tenantIndexDbs(env, tenant), tenant, range);
    expect([...steps.values()].map((step) => step.figures.attempts)).toEqual([2]);
    expect([...(await readLagSteps(env.DB, range)).values()]).toEqual([800]);
  });

  it("prunes the minutes older than a date, a bounded number at a time", async () => {
    const tenant = uniqueId("tenant");
    const db = indexDbFor(env, tenant, "a");
    // Before every other test's minutes, which stay.
    const base = T0 - 30 * 24 * 60 * MINUTE;
    for (let i = 0; i < 5; i++) await write(entry(tenant, "a", { version: i + 1, updatedAt: base + i * MINUTE, metrics: counters({ attempts: i + 1 }) }));

    expect(await pruneMetricsMinutes(db, base + 3 * MINUTE, 2)).toBe(2);
    expect(await pruneMetricsMinutes(db, base + 3 * MINUTE, 2)).toBe(1);
    const kept = await readTenantSeries([db], tenant, { from: base, to: base + 5 * MINUTE, stepMs: MINUTE, points: 5 });
    expect([...kept.keys()].sort()).toEqual([3, 4]);
  });
});
