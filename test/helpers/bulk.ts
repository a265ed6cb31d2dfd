// Bulk jobs as the tests drive them: created through the API, then run a slice at a time by firing the job's alarm
// (time moved, not waited for), and the cheap workflows they act on.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { api, bearer, uniqueId, type TestTenant } from "./api";

export function bulkJobStub(id: string, tenant: TestTenant = "default") {
  return env.BULK_JOBS.getByName(`${tenant}:${id}`);
}

/** A workflow that waits for an event for ten minutes: nothing happens to it unless someone acts on it. */
export function waitingDefinition(name: string) {
  return { name, steps: [{ id: "approval", waitForEvent: { event: "approved", timeoutMs: 600_000 } }] };
}

/** Starts `count` waiting workflows of the definition `name`, `concurrency` at a time; returns their ids in order. */
export async function startWaiting(name: string, count: number, options: { tenant?: TestTenant; concurrency?: number } = {}): Promise<string[]> {
  const ids = Array.from({ length: count }, () => uniqueId(name));
  let next = 0;
  const lane = async () => {
    while (next < ids.length) {
      const id = ids[next++]!;
      const started = await api("POST", "/v1/workflows", { id, definition: waitingDefinition(name) }, { headers: bearer(options.tenant ?? "default") });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 20 }, lane));
  return ids;
}

/** Every workflow of the tenant's index with this definition name, whatever its status. */
export async function listedIds(name: string, tenant: TestTenant = "default"): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await api("GET", `/v1/workflows?name=${name}&limit=100${cursor ? `&cursor=${cursor}` : ""}`, undefined, { headers: bearer(tenant) });
    expect(page.status).toBe(200);
    ids.push(...page.body.workflows.map((w: { id: string }) => w.id));
    cursor = page.body.nextCursor;
  } while (cursor);
  return ids;
}

export async function createBulkJob(body: unknown, tenant: TestTenant = "default") {
  const created = await api("POST", "/v1/bulk", body, { headers: bearer(tenant) });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return created.body as { id: string; status: string };
}

export async function bulkJob(id: string, tenant: TestTenant = "default") {
  const job = await api("GET", `/v1/bulk/${id}`, undefined, { headers: bearer(tenant) });
  expect(job.status, JSON.stringify(job.body)).toBe(200);
  return job.body;
}

/**
 * Fires the job's alarm until it is done, as the runtime would every BULK_GAP_MS; a slice that dies (an injected
 * reset) is fired again, as the platform runs its alarm again. Returns the job, and how many slices it took.
 */
export async function runBulkJob(id: string, tenant: TestTenant = "default", maxSlices = 1_000) {
  for (let slices = 1; slices <= maxSlices; slices++) {
    await runDurableObjectAlarm(bulkJobStub(id, tenant)).catch(() => undefined);
    const job = await bulkJob(id, tenant);
    if (job.status === "done") return { job, slices };
  }
  throw new Error(`bulk job ${id} was not done after ${maxSlices} slices`);
}
