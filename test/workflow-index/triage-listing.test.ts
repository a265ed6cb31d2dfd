// GET /v1/workflows as an operator triages with it, through the real objects, agents and D1 index: each open
// workflow worth a look carries its one line, the step, its attempts and the next deadline, gone once it ends; the
// created range and the id prefix narrow the list; and a workflow whose steps succeed first time writes its index
// entry no more often than before the list had lines.
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { METRICS_COLUMNS } from "../../src/workflow-index/metrics-rows";
import { indexDbFor } from "../../src/workflow-index/index-shards";
import { api, snapshot, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { interceptIndexWrites } from "../helpers/index-db";
import { FAST, PATIENT } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { backdate, elapse } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

type Listed = {
  id: string;
  status: string;
  createdAt: number;
  endedAt?: number;
  summary?: string;
  stepId?: string;
  attempts?: { used: number; max: number };
  nextDeadlineAt?: number;
};

async function list(query: string): Promise<Listed[]> {
  const response = await api("GET", `/v1/workflows?${query}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.workflows;
}

/** The workflow's row in the list, once it satisfies `check` (the index follows the object closely, not at once). */
async function listedRow(id: string, check: (row: Listed) => void): Promise<Listed> {
  return vi.waitFor(
    async () => {
      const row = (await list(`idPrefix=${id}`)).find((workflow) => workflow.id === id);
      expect(row).toBeDefined();
      check(row!);
      return row!;
    },
    { timeout: 10_000, interval: 50 },
  );
}

const PATIENT_POLICIES = { ...PATIENT, breaker: { failures: 100 } };

/** Every index upsert of the workflow's entry the object makes from now on: its status and its line, in order. */
async function recordIndexWrites(id: string): Promise<string[]> {
  const written: string[] = [];
  const summaryAt = 11 + METRICS_COLUMNS.length;
  await runInDurableObject(schedulerStub(id), (instance) => {
    interceptIndexWrites(indexDbFor((instance as unknown as { env: Env }).env, "default", id), (values, bound) => {
      if (values[1] === id) written.push(`${String(values[3])}${values[summaryAt] === null ? "" : `: ${String(values[summaryAt])}`}`);
      return bound;
    });
  });
  return written;
}

describe("the list's line for a workflow", () => {
  it("says a step is retrying after a 503, with its attempts and when the retry starts, and clears once the workflow completes", async () => {
    mockRemote((_call, n) => (n === 1 ? json({ error: "busy" }, 503) : json({ sent: true })));
    const id = uniqueId("triage-retry");
    const definition = { name: "triage-notify", defaults: { ...PATIENT_POLICIES, retry: { ...PATIENT.retry, maxAttempts: 8, initialIntervalMs: 60_000 } }, steps: [{ id: "notify", action: { type: "http", url: `${REMOTE}/notify` } }] };
    await start(definition, { id });

    const retrying = await listedRow(id, (row) => expect(row.summary).toBeDefined());
    expect(retrying).toMatchObject({ status: "running", summary: "retrying notify 2/8 after 503", stepId: "notify", attempts: { used: 2, max: 8 } });
    expect(retrying.nextDeadlineAt).toBeGreaterThan(Date.now() + 50_000);
    expect(retrying).not.toHaveProperty("endedAt");

    await elapse(id, 60_000);
    await waitForStatus(id, "completed");
    const done = await listedRow(id, (row) => expect(row.status).toBe("completed"));
    expect(done.endedAt).toEqual(expect.any(Number));
    for (const field of ["summary", "stepId", "attempts", "nextDeadlineAt"]) expect(done).not.toHaveProperty(field);
  });

  it("says what event a workflow waits for and until when, and clears once the event came", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId("triage-wait");
    await start({ name: "triage-approval", defaults: FAST, steps: [{ id: "approve", waitForEvent: { event: "approved", timeoutMs: 3_600_000 } }, { id: "ship", action: { type: "http", url: `${REMOTE}/ship` } }] }, { id });

    const waiting = await listedRow(id, (row) => expect(row.summary).toBeDefined());
    expect(waiting).toMatchObject({ status: "running", summary: "waiting for event approved", stepId: "approve" });
    expect(waiting.nextDeadlineAt).toBeGreaterThan(Date.now() + 3_000_000);

    expect((await api("POST", `/v1/workflows/${id}/events`, { event: "approved" })).status).toBe(202);
    await waitForStatus(id, "completed");
    expect(await listedRow(id, (row) => expect(row.status).toBe("completed"))).not.toHaveProperty("summary");
  });

  it("says which step failed for good and why, while the workflow waits on an operator", async () => {
    mockRemote(() => json({ error: "declined" }, 422));
    const id = uniqueId("triage-attention");
    await start({ name: "triage-charge", onFailure: "escalate", defaults: FAST, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }] }, { id });

    const row = await listedRow(id, (listed) => expect(listed.status).toBe("needs_attention"));
    expect(row).toMatchObject({ summary: "needs attention: charge failed (422)", stepId: "charge", attempts: { used: 1, max: 3 } });
  });

  it("is absent for a workflow that is simply running", async () => {
    mockRemote(() => json({}, 202));
    const id = uniqueId("triage-quiet");
    await start({ name: "triage-async", defaults: PATIENT_POLICIES, steps: [{ id: "render", action: { type: "http", url: `${REMOTE}/render` } }] }, { id });
    await waitForStep(id, "render", "waiting");

    const row = await listedRow(id, (listed) => expect(listed.status).toBe("running"));
    for (const field of ["summary", "stepId", "attempts", "nextDeadlineAt", "endedAt"]) expect(row).not.toHaveProperty(field);
  });
});

describe("what the list's lines cost in index writes", () => {
  const threeSteps = (name: string) => ({ name, defaults: FAST, steps: ["reserve", "charge", "ship"].map((step) => ({ id: step, action: { type: "http", url: `${REMOTE}/${step}` } })) });

  it("a 3-step workflow whose steps succeed first time writes its entry twice, when it starts and when it ends, as before the lines", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId("triage-cost");
    const written = await recordIndexWrites(id);
    await start(threeSteps("triage-cost"), { id });
    await waitForStatus(id, "completed");
    await listedRow(id, (row) => expect(row.status).toBe("completed"));

    expect(written).toEqual(["running", "completed"]);
  });

  it("a step that succeeds on its second attempt writes once more, when its retry is scheduled; the next write clears the line", async () => {
    mockRemote((call, n) => (new URL(call.url).pathname === "/charge" && n === 1 ? json({}, 503) : json({ ok: true })));
    const id = uniqueId("triage-cost-retry");
    const written = await recordIndexWrites(id);
    await start(threeSteps("triage-cost"), { id });
    await waitForStatus(id, "completed");
    await listedRow(id, (row) => expect(row.status).toBe("completed"));

    expect(written).toEqual(["running", "running: retrying charge 2/3 after 503", "running", "completed"]);
  });
});

describe("GET /v1/workflows filters", () => {
  const HOUR = 3_600_000;
  const iso = (ms: number) => new Date(ms).toISOString();

  it("narrows to a created range (ISO 8601 or epoch ms, createdAfter inclusive) and to an id prefix, each alone and together", async () => {
    mockRemote(() => json({ ok: true }));
    const family = uniqueId("triage-family");
    const ids = { old: `${family}-a-old`, recent: `${family}-a-recent`, other: `${family}-b-new` };
    for (const id of Object.values(ids)) await start({ name: "triage-filter", defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });
    for (const id of Object.values(ids)) await waitForStatus(id, "completed");
    await backdate(ids.old, { ms: 3 * HOUR });
    await backdate(ids.recent, { ms: HOUR });
    const now = Date.now();
    const listedIds = async (query: string) => (await list(`idPrefix=${family}&${query}`)).map((workflow) => workflow.id);

    expect(await listedIds(`createdAfter=${iso(now - 2 * HOUR)}`)).toEqual([ids.other, ids.recent]);
    expect(await listedIds(`createdBefore=${iso(now - 2 * HOUR)}`)).toEqual([ids.old]);
    expect(await listedIds(`createdAfter=${now - 4 * HOUR}&createdBefore=${now - 30 * 60_000}`)).toEqual([ids.recent, ids.old]);
    const recentCreatedAt = (await list(`idPrefix=${ids.recent}`))[0]!.createdAt;
    expect(await listedIds(`createdAfter=${recentCreatedAt}&createdBefore=${recentCreatedAt + 1}`)).toEqual([ids.recent]);
    expect((await list(`idPrefix=${family}-a`)).map((workflow) => workflow.id)).toEqual([ids.recent, ids.old]);
    expect((await list(`idPrefix=${family}-a&createdAfter=${iso(now - 2 * HOUR)}`)).map((workflow) => workflow.id)).toEqual([ids.recent]);
    expect(await list(`idPrefix=${family}-c`)).toEqual([]);
    // A prefix is matched as written: letters keep their case.
    expect(await list(`idPrefix=${family.toUpperCase()}`)).toEqual([]);
  });

  it("pages a filtered list with its cursor", async () => {
    mockRemote(() => json({ ok: true }));
    const family = uniqueId("triage-paged");
    const ids = [1, 2, 3, 4, 5].map((n) => `${family}-${n}`);
    for (const id of ids) await start({ name: "triage-paged", defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const response = await api("GET", `/v1/workflows?idPrefix=${family}&createdAfter=${iso(Date.now() - HOUR)}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(response.status).toBe(200);
      seen.push(...response.body.workflows.map((workflow: Listed) => workflow.id));
      cursor = response.body.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids].sort());
  });

  it.each([
    { query: "createdAfter=yesterday", path: "createdAfter", says: "epoch milliseconds or an ISO 8601" },
    { query: "createdBefore=2024-13-45T00:00:00Z", path: "createdBefore", says: "is not a date" },
    { query: "createdAfter=2024-05-02T00:00:00Z&createdBefore=2024-05-01T00:00:00Z", path: "createdAfter", says: "must be before createdBefore" },
    { query: "createdAfter=1714521600000&createdBefore=1714521600000", path: "createdAfter", says: "must be before createdBefore" },
    { query: "idPrefix=", path: "idPrefix", says: "" },
    { query: "idPrefix=order%201", path: "idPrefix", says: "" },
    { query: "idPrefix=-order", path: "idPrefix", says: "" },
    { query: `idPrefix=${"a".repeat(129)}`, path: "idPrefix", says: "" },
  ])("answers 400 naming the parameter for $query, and changes nothing", async ({ query, path, says }) => {
    mockRemote(() => json({}, 202));
    const id = uniqueId("triage-bad");
    await start({ name: "triage-bad", defaults: PATIENT_POLICIES, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });
    await waitForStep(id, "only", "waiting");
    const before = { workflow: await snapshot("default", id), listed: await list(`idPrefix=${id}`) };

    const response = await api("GET", `/v1/workflows?${query}`);

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    expect(response.body.error.details.map((detail: { path: string[] }) => detail.path)).toContainEqual([path]);
    expect(response.body.error.message).toContain(path);
    expect(response.body.error.message).toContain(says);
    expect({ workflow: await snapshot("default", id), listed: await list(`idPrefix=${id}`) }).toEqual(before);
  });
});
