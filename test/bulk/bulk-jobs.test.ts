// Bulk jobs through the real objects (contract v1.2, "Bulk operations"): each action on every workflow a filter
// matches, the filters, the counts, validation and tenancy. The job's alarm is fired by the test (runBulkJob).
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, bearer, getWorkflow, historyOf, NAMED_TOKEN, uniqueId } from "../helpers/api";
import { bulkJob, bulkJobStub, createBulkJob, listedIds, runBulkJob, startWaiting } from "../helpers/bulk";

const uniqueName = (prefix: string) => uniqueId(prefix).replace(/[^A-Za-z0-9-]/g, "-");

/** Waits until the index lists all `ids` under `name` (index entries are written just after each start). */
async function indexed(name: string, ids: string[], tenant: "default" | "alpha" | "beta" = "default") {
  await expect.poll(async () => (await listedIds(name, tenant)).sort(), { timeout: 10_000, interval: 50 }).toEqual([...ids].sort());
}

const statusOf = async (id: string) => (await getWorkflow(id)).status as string;
const typesOf = async (id: string, type: string) => (await historyOf(id)).filter((event) => event.type === type);

describe("a bulk job", () => {
  it("cancels every workflow of a definition once, as the token that created it, leaves the others alone and counts each once", async () => {
    const name = uniqueName("bulk-cancel");
    const ids = await startWaiting(name, 7);
    const [other] = await startWaiting(uniqueName("bulk-bystander"), 1);
    await indexed(name, ids);

    const answer = await api("POST", "/v1/bulk", { action: "cancel", filter: { name }, reason: "release rolled back" }, { headers: { Authorization: `Bearer ${NAMED_TOKEN.token}` } });
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ id: expect.any(String), action: "cancel", status: "running", matched: 0, done: 0, failed: 0, errors: [], filter: { name }, reason: "release rolled back", actor: "alice" });
    const { job } = await runBulkJob(answer.body.id);

    expect(job).toMatchObject({ status: "done", matched: 7, done: 7, failed: 0, errors: [], endedAt: expect.any(Number) });
    for (const id of ids) {
      expect(await statusOf(id)).toBe("cancelled");
      expect((await typesOf(id, "operator_action")).map((event) => event.data)).toEqual([{ action: "cancel", actor: "alice", reason: "release rolled back" }]);
    }
    expect(await statusOf(other!)).toBe("running");
  });

  it("counts a workflow that refuses the action as failed, with the workflow's reason, and matched = done + failed", async () => {
    const name = uniqueName("bulk-refused");
    const ids = await startWaiting(name, 4);
    await indexed(name, ids);
    for (const id of ids.slice(0, 2)) expect((await api("POST", `/v1/workflows/${id}/cancel`)).status).toBe(202);

    const { job } = await runBulkJob((await createBulkJob({ action: "cancel", filter: { name } })).id);

    expect(job).toMatchObject({ status: "done", matched: 4, done: 2, failed: 2 });
    expect(job.errors.map((error: { workflowId: string }) => error.workflowId).sort()).toEqual(ids.slice(0, 2).sort());
    expect(job.errors[0]).toMatchObject({ code: "conflict", message: expect.stringMatching(/already ended \(cancelled\)/) });
    for (const id of ids) expect(await typesOf(id, "operator_action")).toHaveLength(1);
  });

  it("pauses and then resumes only the workflows in the status asked for", async () => {
    const name = uniqueName("bulk-pause");
    const ids = await startWaiting(name, 5);
    await indexed(name, ids);
    expect((await api("POST", `/v1/workflows/${ids[0]}/cancel`)).status).toBe(202);

    const paused = await runBulkJob((await createBulkJob({ action: "pause", filter: { name, status: "running" } })).id);
    expect(paused.job).toMatchObject({ matched: 4, done: 4, failed: 0 });
    for (const id of ids.slice(1)) expect(await statusOf(id)).toBe("paused");
    await expect.poll(async () => (await api("GET", `/v1/workflows?name=${name}&status=paused`)).body.workflows.length, { timeout: 10_000 }).toBe(4);

    const resumed = await runBulkJob((await createBulkJob({ action: "resume", filter: { name, status: "paused" } })).id);
    expect(resumed.job).toMatchObject({ matched: 4, done: 4, failed: 0 });
    for (const id of ids.slice(1)) expect(await statusOf(id)).toBe("running");
    expect(await statusOf(ids[0]!)).toBe("cancelled");
  });

  it("terminates with who acted and the job's reason in each workflow's history", async () => {
    const name = uniqueName("bulk-terminate");
    const ids = await startWaiting(name, 3);
    await indexed(name, ids);

    const { job } = await runBulkJob((await createBulkJob({ action: "terminate", filter: { name }, reason: "duplicate orders" })).id);

    expect(job).toMatchObject({ matched: 3, done: 3, failed: 0 });
    for (const id of ids) {
      expect(await statusOf(id)).toBe("terminated");
      expect((await typesOf(id, "workflow_terminated")).map((event) => event.data)).toEqual([{ actor: "default", reason: "duplicate orders" }]);
    }
  });

  it("redrives the cancelled workflows it matches", async () => {
    const name = uniqueName("bulk-redrive");
    const ids = await startWaiting(name, 3);
    await indexed(name, ids);
    await runBulkJob((await createBulkJob({ action: "cancel", filter: { name } })).id);
    await expect.poll(async () => (await api("GET", `/v1/workflows?name=${name}&status=cancelled`)).body.workflows.length, { timeout: 10_000 }).toBe(3);

    const { job } = await runBulkJob((await createBulkJob({ action: "redrive", filter: { name, status: "cancelled" } })).id);

    expect(job).toMatchObject({ matched: 3, done: 3, failed: 0 });
    for (const id of ids) {
      expect(await statusOf(id)).toBe("running");
      expect(await typesOf(id, "workflow_redriven")).toHaveLength(1);
    }
  });

  it("sends an event each waiting workflow takes, once, under the job's own dedupe id when the event has none", async () => {
    const name = uniqueName("bulk-event");
    const ids = await startWaiting(name, 3);
    await indexed(name, ids);

    const created = await createBulkJob({ action: "event", filter: { name }, event: { event: "approved", payload: { by: "ops" } } });
    const { job } = await runBulkJob(created.id);

    expect(job).toMatchObject({ matched: 3, done: 3, failed: 0, event: { event: "approved", payload: { by: "ops" } } });
    for (const id of ids) {
      const workflow = await getWorkflow(id);
      expect(workflow).toMatchObject({ status: "completed", output: { approval: { by: "ops" } } });
      expect((await typesOf(id, "event_received")).map((event) => event.data)).toEqual([{ event: "approved", id: `bulk:${created.id}`, buffered: false, actor: "default" }]);
    }
  });

  it("acts only on the ids named, and matches none the tenant does not have", async () => {
    const name = uniqueName("bulk-ids");
    const ids = await startWaiting(name, 4);
    await indexed(name, ids);

    const { job } = await runBulkJob((await createBulkJob({ action: "pause", filter: { ids: [ids[1], ids[3], "no-such-workflow"] } })).id);

    expect(job).toMatchObject({ matched: 2, done: 2, failed: 0 });
    expect(await Promise.all(ids.map(statusOf))).toEqual(["running", "paused", "running", "paused"]);
  });

  it("matches the ids that start with idPrefix, as the list does", async () => {
    const name = uniqueName("bulk-prefix");
    const ids = await startWaiting(name, 3);
    await indexed(name, ids);

    const { job } = await runBulkJob((await createBulkJob({ action: "pause", filter: { idPrefix: ids[1]! } })).id);

    expect(job).toMatchObject({ matched: 1, done: 1, failed: 0 });
    expect(await Promise.all(ids.map(statusOf))).toEqual(["running", "paused", "running"]);
  });

  it("matches the created range half-open, createdAfter included and createdBefore not", async () => {
    const name = uniqueName("bulk-range");
    const ids = await startWaiting(name, 4, { concurrency: 1 });
    await indexed(name, ids);
    const created = await Promise.all(ids.map(async (id) => (await getWorkflow(id)).createdAt as number));
    const [first, second, third] = created as [number, number, number];
    // Started one after another, so no two share a millisecond only by chance: make sure the bounds pick them apart.
    expect(new Set(created).size).toBe(4);
    const inRange = ids.filter((_, i) => created[i]! >= second && created[i]! < third);

    const { job } = await runBulkJob((await createBulkJob({ action: "pause", filter: { name, createdAfter: second, createdBefore: third } })).id);

    expect(job).toMatchObject({ matched: inRange.length, done: inRange.length });
    expect(inRange).toContain(ids[1]);
    expect(await statusOf(ids[1]!)).toBe("paused");
    for (const id of ids.filter((id) => !inRange.includes(id))) expect(await statusOf(id)).toBe("running");
    expect(first).toBeLessThan(second);
  });

  it("matches only the children of the parent named", async () => {
    const name = uniqueName("bulk-parent");
    const child = { name: `${name}-child`, steps: [{ id: "hold", waitForEvent: { event: "approved", timeoutMs: 600_000 } }] };
    const parent = uniqueId("bulk-parent");
    const started = await api("POST", "/v1/workflows", { id: parent, definition: { name, steps: [{ id: "a", workflow: { definition: child } }, { id: "b", dependsOn: [], workflow: { definition: child } }] } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const [other] = await startWaiting(`${name}-child`, 1);
    await indexed(`${name}-child`, [`${parent}:a`, `${parent}:b`, other!]);

    const { job } = await runBulkJob((await createBulkJob({ action: "pause", filter: { parentId: parent } })).id);

    expect(job).toMatchObject({ matched: 2, done: 2, failed: 0 });
    expect(await Promise.all([`${parent}:a`, `${parent}:b`, other!, parent].map(statusOf))).toEqual(["paused", "paused", "running", "running"]);
  });

  it("matches no workflow started after the job was created", async () => {
    const name = uniqueName("bulk-later");
    const ids = await startWaiting(name, 2);
    await indexed(name, ids);
    const created = await createBulkJob({ action: "pause", filter: { name } });
    const later = await startWaiting(name, 1);
    await indexed(name, [...ids, ...later]);

    const { job } = await runBulkJob(created.id);

    expect(job).toMatchObject({ matched: 2, done: 2 });
    expect(await statusOf(later[0]!)).toBe("running");
  });

  it("acts once on a workflow it had marked as being acted on when its instance stopped, when the action had not landed", async () => {
    const name = uniqueName("bulk-unlanded");
    const ids = await startWaiting(name, 2);
    await indexed(name, ids);
    const created = await createBulkJob({ action: "cancel", filter: { name } });
    // The first slice reads the page; then the row of the first workflow is left `acting`, as by an instance that
    // died just before its call went out.
    await runInDurableObject(bulkJobStub(created.id), async (instance: { alarm(): Promise<void> }, state) => {
      await instance.alarm();
      state.storage.sql.exec("UPDATE targets SET state = 'acting', acting_at = ?, tries = 1 WHERE workflow_id = ?", Date.now(), ids[0]);
    });
    const before = await bulkJob(created.id);
    expect(before).toMatchObject({ status: "running", matched: 2 });

    const { job } = await runBulkJob(created.id);

    expect(job).toMatchObject({ status: "done", matched: 2, done: 2, failed: 0 });
    for (const id of ids) expect(await typesOf(id, "operator_action")).toHaveLength(1);
  });
});

describe("POST /v1/bulk", () => {
  const refusals: [string, unknown, (string | number)[]][] = [
    ["an empty filter (it is never read as every workflow)", { action: "cancel", filter: {} }, ["filter"]],
    ["no filter", { action: "cancel" }, ["filter"]],
    ["an unknown action", { action: "delete", filter: { name: "x" } }, ["action"]],
    ["an event without action event", { action: "cancel", filter: { name: "x" }, event: { event: "approved" } }, ["event"]],
    ["action event without its event", { action: "event", filter: { name: "x" } }, ["event"]],
    ["an empty created range", { action: "pause", filter: { createdAfter: 2_000, createdBefore: 1_000 } }, ["filter", "createdAfter"]],
    ["an empty list of ids", { action: "pause", filter: { ids: [] } }, ["filter", "ids"]],
    ["an id that is not an id", { action: "pause", filter: { ids: ["-bad id"] } }, ["filter", "ids", 0]],
    ["an unknown filter field", { action: "pause", filter: { name: "x", tenant: "beta" } }, ["filter"]],
    ["an unknown status", { action: "pause", filter: { status: "sleeping" } }, ["filter", "status"]],
    ["an empty reason", { action: "cancel", filter: { name: "x" }, reason: "" }, ["reason"]],
  ];

  it.each(refusals)("refuses %s with 400 naming where, and creates no job", async (_what, body, path) => {
    const before = (await api("GET", "/v1/bulk?limit=100")).body.jobs.length;
    const response = await api("POST", "/v1/bulk", body);
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    expect(response.body.error.details.map((issue: { path: unknown }) => JSON.stringify(issue.path))).toContain(JSON.stringify(path));
    expect((await api("GET", "/v1/bulk?limit=100")).body.jobs.length).toBe(before);
  });
});

describe("POST /v1/bulk with an id", () => {
  it("answers the same job, 200, when the same request comes again, and acts on each workflow once", async () => {
    const name = uniqueName("bulk-retried");
    const ids = await startWaiting(name, 3);
    await indexed(name, ids);
    const id = uniqueName("job");
    const request = { id, action: "cancel", filter: { name }, reason: "retried by its client" };

    const first = await api("POST", "/v1/bulk", request);
    const again = await api("POST", "/v1/bulk", request);

    expect(first.status).toBe(202);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id, action: "cancel", createdAt: first.body.createdAt });
    const { job } = await runBulkJob(id);
    expect(job).toMatchObject({ matched: 3, done: 3 });
    for (const workflowId of ids) expect(await typesOf(workflowId, "operator_action")).toHaveLength(1);
    expect((await api("GET", "/v1/bulk?limit=100")).body.jobs.filter((listed: { id: string }) => listed.id === id)).toHaveLength(1);
  });

  it("refuses another request under the same id with 409, and the job stays as first asked", async () => {
    const name = uniqueName("bulk-conflict");
    const id = uniqueName("job");
    expect((await api("POST", "/v1/bulk", { id, action: "pause", filter: { name } })).status).toBe(202);

    const other = await api("POST", "/v1/bulk", { id, action: "terminate", filter: { name } });

    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: "conflict", message: expect.stringContaining(id) });
    expect((await api("GET", `/v1/bulk/${id}`)).body).toMatchObject({ action: "pause" });
  });

  it("refuses an id that is not an id with 400 naming it", async () => {
    const response = await api("POST", "/v1/bulk", { id: "-bad id", action: "pause", filter: { name: "x" } });
    expect(response.status).toBe(400);
    expect(response.body.error.details.map((issue: { path: unknown }) => JSON.stringify(issue.path))).toContain(JSON.stringify(["id"]));
  });
});

describe("bulk jobs and tenants", () => {
  it("never touch another tenant's workflows, even of the same name, and another tenant cannot read the job", async () => {
    const name = uniqueName("bulk-tenancy");
    const alphas = await startWaiting(name, 3, { tenant: "alpha" });
    const betas = await startWaiting(name, 2, { tenant: "beta" });
    await indexed(name, alphas, "alpha");
    await indexed(name, betas, "beta");

    const created = await createBulkJob({ action: "cancel", filter: { name } }, "beta");
    const { job } = await runBulkJob(created.id, "beta");

    expect(job).toMatchObject({ matched: 2, done: 2, failed: 0, actor: "beta" });
    for (const id of alphas) expect((await api("GET", `/v1/workflows/${id}`, undefined, { headers: bearer("alpha") })).body.status).toBe("running");
    const read = await api("GET", `/v1/bulk/${created.id}`, undefined, { headers: bearer("alpha") });
    expect(read.status).toBe(404);
    expect(read.body.error.code).toBe("not_found");
    const listed = await api("GET", "/v1/bulk?limit=100", undefined, { headers: bearer("alpha") });
    expect(listed.body.jobs.map((j: { id: string }) => j.id)).not.toContain(created.id);
  });
});

describe("GET /v1/bulk/{id}", () => {
  it("answers 404 for a job no one created, and leaves nothing stored in its object", async () => {
    const id = crypto.randomUUID();
    const response = await api("GET", `/v1/bulk/${id}`);
    expect(response.status).toBe(404);
    const tables = await runInDurableObject(bulkJobStub(id), (_instance, state) => state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray());
    expect(tables).toEqual([]);
  });
});

describe("GET /v1/bulk", () => {
  it("lists the tenant's jobs newest first, a page at a time", async () => {
    const name = uniqueName("bulk-list");
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await createBulkJob({ action: "pause", filter: { name } }, "beta")).id);

    const first = await api("GET", "/v1/bulk?limit=2", undefined, { headers: bearer("beta") });
    expect(first.status).toBe(200);
    expect(first.body.jobs.map((j: { id: string }) => j.id)).toEqual([made[2], made[1]]);
    const second = await api("GET", `/v1/bulk?limit=2&cursor=${first.body.nextCursor}`, undefined, { headers: bearer("beta") });
    expect(second.body.jobs[0].id).toBe(made[0]);
  });
});
