import { afterEach, describe, expect, it, vi } from "vitest";
import { start, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow, refuseIndexWrites } from "../helpers/index-db";
import { FAST } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { objectRecord } from "../helpers/scheduler";
import { elapse } from "../helpers/time";

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
});
