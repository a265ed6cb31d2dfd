import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DefinitionSchema } from "../../src/domain/language/definition";
import { planWorkflow } from "../../src/domain/language/plan";
import { SEND_LEASE_MS } from "../../src/workflow/delivery-policy";
import { start, uniqueId, waitForStatus } from "../helpers/api";
import { holdIndexWrite, indexRow, refuseIndexWrites } from "../helpers/index-db";
import { FAST, PATIENT } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { objectRecord, schedulerStub } from "../helpers/scheduler";
import { elapse, fireAlarm } from "../helpers/time";

/** The object's own view: its stored version and what waits in its outbox. */
async function objectIndexState(id: string) {
  const { workflow, outbox } = await objectRecord(id);
  return { version: workflow!.version, outbox: outbox!.map(({ kind, attempts }) => ({ kind, attempts })) };
}

afterEach(() => vi.restoreAllMocks());

const twoSteps = {
  name: "outbox",
  defaults: FAST,
  steps: [
    { id: "a", action: { type: "http", url: `${REMOTE}/a` } },
    { id: "b", action: { type: "http", url: `${REMOTE}/b` } },
  ],
};

const oneStep = { name: "outbox-lease", defaults: PATIENT, steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }] };

/**
 * Starts `oneStep` and reports its attempt done, the test playing the agent (no queue, no remote), so nothing but
 * the object's own alarm calls it afterwards. Answers the report's call, which waits for the completion's index write.
 */
async function completeAsItsAgent(id: string): Promise<unknown> {
  watchSends(() => true);
  const stub = schedulerStub(id);
  await stub.start({ tenant: "default", id, plan: planWorkflow(DefinitionSchema.parse(oneStep)), input: null, requestHash: `hash-of-${id}` });
  expect((await stub.claim("a", 1)).ok).toBe(true);
  return stub.report("a", 1, { type: "succeeded", output: { done: true } });
}

/** While the completion's index write is unanswered: the object has ended, its entry waits, and the alarm covers it. */
async function expectEntryLeasedToAlarm(id: string) {
  const record = await objectRecord(id);
  expect(record.workflow!.status).toBe("completed");
  expect(record.outbox!.map(({ kind, payload_json }) => ({ kind, status: JSON.parse(payload_json).status }))).toEqual([{ kind: "index", status: "completed" }]);
  expect(record.alarmAt).toEqual(expect.any(Number));
  expect(record.alarmAt!).toBeLessThanOrEqual(Date.now() + SEND_LEASE_MS);
  expect((await indexRow(id))?.status).toBe("running");
}

/** The index says what the object says, and nothing is left to deliver or to wake for. */
async function expectIndexedAndIdle(id: string) {
  const record = await objectRecord(id);
  expect(await indexRow(id)).toMatchObject({ status: "completed", version: record.workflow!.version });
  expect(record.outbox).toEqual([]);
  expect(record.alarmAt).toBeNull();
}

describe("the index outbox", () => {
  it("writes the index when a workflow starts and when its status changes, not on every step", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    await start(twoSteps, { id });
    await waitForStatus(id, "completed");
    await vi.waitFor(async () => expect((await indexRow(id))?.status).toBe("completed"));
    const row = await indexRow(id);
    const object = await objectIndexState(id);
    expect(row).toMatchObject({ tenant: "default", name: "outbox", status: "completed", version: object.version, next_deadline_at: null });
    expect(row!.ended_at).toEqual(expect.any(Number));
    expect(object.outbox).toEqual([]);
  });

  it("case 18 (D1 index failure): keeps a status D1 refused in the outbox and delivers it when D1 is back, through the object's alarm", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const outage = await refuseIndexWrites(id);
    await start(twoSteps, { id });
    // The workflow does not wait for the index: it completes during the outage.
    await waitForStatus(id, "completed");
    expect(outage.count).toBeGreaterThanOrEqual(1);
    expect(await indexRow(id)).toBeNull();
    const during = await objectIndexState(id);
    expect(during.outbox).toEqual([{ kind: "index", attempts: expect.any(Number) }]);
    expect(during.outbox[0]!.attempts).toBeGreaterThanOrEqual(1);

    // Nothing else happens to this workflow now: only the alarm's retry (at most a minute on) can deliver the entry.
    outage.restore();
    await elapse(id, 60_000);
    expect((await indexRow(id))?.status).toBe("completed");
    const after = await objectIndexState(id);
    expect((await indexRow(id))!.version).toBe(after.version);
    expect(after.outbox).toEqual([]);
  });

  it("keeps the alarm on an index entry while its write is under way, so an instance lost before D1 answered leaves it to the alarm", async () => {
    const id = uniqueId();
    const write = await holdIndexWrite(id, "completed");
    const reported = completeAsItsAgent(id).catch((error: unknown) => error);
    await vi.waitFor(() => expect(write.held).toBe(true));
    await expectEntryLeasedToAlarm(id);

    // The instance goes (evicted, reset, its call dropped) with the write unanswered; no call comes to it after.
    await runInDurableObject(schedulerStub(id), (_instance, state) => state.abort("lost before D1 answered")).catch(() => undefined);
    expect(await reported).toMatchObject({ durableObjectReset: true });

    // Only the alarm, a lease on, is left to write the entry.
    await elapse(id, SEND_LEASE_MS);
    await expectIndexedAndIdle(id);
  });

  it("writes an entry again once its write has gone unanswered for a lease, with the same instance still waiting for it", async () => {
    const id = uniqueId();
    const write = await holdIndexWrite(id, "completed");
    const reported = completeAsItsAgent(id);
    await vi.waitFor(() => expect(write.held).toBe(true));
    await expectEntryLeasedToAlarm(id);

    // The lease passes on the object's clock; its alarm takes the write as lost and makes it again.
    const now = Date.now.bind(Date);
    vi.spyOn(Date, "now").mockImplementation(() => now() + SEND_LEASE_MS);
    expect(await fireAlarm(id)).toBe(true);
    vi.mocked(Date.now).mockRestore();
    expect((await indexRow(id))?.status).toBe("completed");

    // The first write's late answer changes nothing: the same version, written twice.
    write.release();
    expect(await reported).toMatchObject({ ok: true });
    await expectIndexedAndIdle(id);
  });
});
