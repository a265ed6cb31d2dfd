import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { api, start, uniqueId, waitForStatus } from "../helpers/api";
import { indexDbOf, indexRow, interceptIndexWrites, pickIndexColumns, refuseIndexWrites, type IndexRow } from "../helpers/index-db";
import { gate } from "../helpers/gate";
import { FAST } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { objectRecord } from "../helpers/scheduler";
import { backdate, elapse, fireAlarm } from "../helpers/time";

/** An index write that failed is tried again after 1 s, 2 s, 4 s … at most 60 s apart (src/workflow/outbox.ts). */
const INDEX_RETRY_MAX_MS = 60_000;

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

const twoSteps = (name: string) => ({
  name,
  defaults: FAST,
  steps: [
    { id: "a", action: { type: "http", url: `${REMOTE}/a` } },
    { id: "b", action: { type: "http", url: `${REMOTE}/b` } },
  ],
});

/** The index row must say exactly what the object holds: status, times, deadline and state version. */
async function expectRowMatchesObject(id: string) {
  const view = (await api("GET", `/v1/workflows/${id}`)).body;
  const object = await objectRecord(id);
  const row = await indexRow(id);
  // The listing's columns; the metrics columns (GET /v1/metrics) are checked in test/metrics.
  expect(row && pickIndexColumns(row)).toEqual<IndexRow>({
    tenant: "default",
    id,
    name: view.name,
    status: view.status,
    created_at: view.createdAt,
    updated_at: view.updatedAt,
    ended_at: view.endedAt ?? null,
    next_deadline_at: null,
    version: object.workflow!.version,
  });
  expect(object.outbox).toEqual([]);
  return row!;
}

describe("case 18: D1 index failure / out-of-order", () => {
  it("runs the workflow on while D1 refuses every index write; the outbox keeps the newest entry and the alarm delivers it when D1 is back", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const outage = await refuseIndexWrites(id);
    await start(twoSteps("d1-down"), { id });

    // The object is authoritative: the workflow completes during the outage and reads say so.
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output).toEqual({ a: { ok: true }, b: { ok: true } });
    expect(outage.count).toBeGreaterThanOrEqual(2);
    expect(await indexRow(id)).toBeNull();
    const during = await objectRecord(id);
    // One entry waits, the newest (the completion replaced the start's), with its failures counted.
    expect(during.outbox).toHaveLength(1);
    expect(JSON.parse(during.outbox![0]!.payload_json)).toMatchObject({ status: "completed", version: during.workflow!.version });
    expect(during.outbox![0]!.attempts).toBeGreaterThanOrEqual(1);
    // A completed workflow keeps an alarm only to retry its index write.
    expect(during.alarmAt).toEqual(expect.any(Number));
    const listed = await api("GET", "/v1/workflows?name=d1-down");
    expect(listed.body.workflows.map((w: { id: string }) => w.id)).not.toContain(id);

    // D1 is back: nothing else happens to this workflow, so only the alarm's retry can repair the index.
    outage.restore();
    await elapse(id, INDEX_RETRY_MAX_MS);
    expect((await indexRow(id))?.status).toBe("completed");
    await expectRowMatchesObject(id);
    expect((await objectRecord(id)).alarmAt).toBeNull();
    expect((await api("GET", "/v1/workflows?name=d1-down")).body.workflows).toContainEqual(expect.objectContaining({ id, status: "completed" }));
  });

  it("never writes an older entry over a newer one: a failed start entry is dropped once the completion's entry reaches D1", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    // Only the first index write (the start's, version 1) fails; the completion's goes through.
    injectFault("indexWriteFails", { probability: 1, times: 1 });
    await start(twoSteps("d1-flaky"), { id });
    expect(timesFired("indexWriteFails")).toBe(1);

    await waitForStatus(id, "completed");
    await vi.waitFor(async () => expect((await indexRow(id))?.status).toBe("completed"));
    const row = await expectRowMatchesObject(id);
    expect(row.version).toBeGreaterThan(1);
    // Past the failed entry's retry time (1 s), nothing has moved the row back to "running" (nor any alarm, if set).
    const movedMs = INDEX_RETRY_MAX_MS;
    await backdate(id, { ms: movedMs });
    await fireAlarm(id);
    const moved = (at: number | null) => (at === null ? null : at - movedMs);
    expect(await indexRow(id)).toEqual({ ...row, created_at: moved(row.created_at), updated_at: moved(row.updated_at), ended_at: moved(row.ended_at) });
  });

  it("refuses a stale index write that arrives after a newer one: the row keeps the newest version and equals the object", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    // The start's index write (version 1) is held in flight; meanwhile the workflow runs to its end and the
    // completion's write lands first. Then the old write arrives.
    const held = gate();
    const writes: { status: unknown; version: unknown; changes?: number }[] = [];
    interceptIndexWrites(indexDbOf(id), (values, bound) => {
      if (values[1] !== id) return bound;
      const write: (typeof writes)[number] = { status: values[3], version: values[8] };
      writes.push(write);
      return {
        run: async () => {
          if (write === writes[0]) await held.opened;
          const result = await bound.run();
          write.changes = result.meta.changes;
          return result;
        },
      };
    });

    const started = api("POST", "/v1/workflows", { id, definition: twoSteps("d1-late") });
    await waitForStatus(id, "completed");
    const newest = () => writes.find((write) => write.status === "completed");
    await vi.waitFor(() => expect(newest()?.changes).toBe(1));
    const completed = await indexRow(id);
    expect(completed).toMatchObject({ status: "completed", version: newest()!.version });
    expect(writes[0]!.changes).toBeUndefined();

    held.open();
    expect((await started).status).toBe(201);
    // The late write of version 1 changed nothing: the upsert refuses an older version.
    expect(writes[0]).toEqual({ status: "running", version: 1, changes: 0 });
    expect(await indexRow(id)).toEqual(completed);
    const row = await expectRowMatchesObject(id);
    expect(row.version).toBe(newest()!.version);
  });
});
