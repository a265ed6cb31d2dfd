import { afterEach, describe, expect, it, vi } from "vitest";
import { api, start, uniqueId, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";

afterEach(() => vi.restoreAllMocks());

/**
 * SQLite bills every row written ($1.00 per million), so the rows a step writes decide what it costs (docs/cost.md).
 * Measured with the object's own counters (the dev route): every statement's `rowsWritten`, the schema's batch among
 * them, and each alarm write, billed as a row.
 */
const MAX_ROWS_PER_STEP = 3;
const MAX_ROWS_OF_FIVE_STEPS = 30;

/** The rows a sequential workflow of `steps` steps writes from its start until its outbox is empty. */
async function rowsWrittenBy(steps: number): Promise<number> {
  const id = uniqueId("rows");
  const definition = { name: "rows", defaults: FAST, steps: Array.from({ length: steps }, (_, n) => ({ id: `s${n + 1}`, action: { type: "http", url: `${REMOTE}/ok` } })) };
  await start(definition, { id });
  await waitForStatus(id, "completed");
  const { storage } = await vi.waitFor(async () => {
    const inspected = (await api("GET", `/dev/workflows/${id}`)).body;
    expect(inspected).toMatchObject({ indexPending: false, unsentTasks: 0 });
    return inspected;
  });
  return storage.rowsWritten + storage.alarmWrites;
}

describe("the rows a workflow's object writes", () => {
  it("stays within its budget per step and for a five-step workflow", async () => {
    mockRemote(() => json({ ok: true }));
    // The tenant's first workflow also writes the webhooks' cursor, until a delivery finds it has no subscription:
    // a cost per tenant, not per workflow, so the counts start after it.
    await rowsWrittenBy(1);
    const [one, five] = [await rowsWrittenBy(1), await rowsWrittenBy(5)];
    expect((five - one) / 4).toBeLessThanOrEqual(MAX_ROWS_PER_STEP);
    expect(five).toBeLessThanOrEqual(MAX_ROWS_OF_FIVE_STEPS);
  });
});
