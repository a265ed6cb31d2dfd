// Case 34: a bulk job across a restart. A bulk cancel of 500 workflows whose object is reset halfway, at the worst
// moment (a workflow has just accepted its cancel, and the job has not recorded it): every workflow is cancelled
// exactly once, and the job's counts add up.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { api, historyOf, uniqueId } from "../helpers/api";
import { bulkJob, bulkJobStub, createBulkJob, listedIds, runBulkJob, startWaiting } from "../helpers/bulk";

afterEach(() => clearInjectedFaults());

const WORKFLOWS = 500;

describe("case 34: bulk job across a restart", () => {
  it("cancels each of 500 workflows exactly once when the job's object is reset halfway, and its counts add up", { timeout: 180_000 }, async () => {
    const name = uniqueId("bulk-500").replace(/[^A-Za-z0-9-]/g, "-");
    const ids = await startWaiting(name, WORKFLOWS);
    await expect.poll(async () => (await listedIds(name)).length, { timeout: 30_000, interval: 200 }).toBe(WORKFLOWS);
    // The reset comes as the 251st workflow's cancel is answered, before the job records it.
    injectFault("abortAfterBulkAction", { probability: 1, times: 1, skip: WORKFLOWS / 2 });

    const created = await createBulkJob({ action: "cancel", filter: { name, status: "running" }, reason: "case 34" });
    // A fresh stub for every call: after a reset the old one stays broken.
    while (timesFired("abortAfterBulkAction") === 0) await runDurableObjectAlarm(bulkJobStub(created.id)).catch(() => undefined);

    // What the reset left: the workflows whose calls were out, one of them cancelled already, none of them counted.
    const acting = await runInDurableObject(bulkJobStub(created.id), (_instance, state) =>
      state.storage.sql.exec<{ workflow_id: string }>("SELECT workflow_id FROM targets WHERE state = 'acting'").toArray().map((row) => row.workflow_id),
    );
    const landed = await Promise.all(acting.map(async (id) => (await historyOf(id)).some((event) => event.type === "operator_action")));
    expect(landed).toContain(true);
    const halfway = await bulkJob(created.id);
    expect(halfway).toMatchObject({ status: "running", matched: WORKFLOWS, failed: 0 });
    expect(halfway.done).toBeGreaterThanOrEqual(WORKFLOWS / 2 - acting.length);
    expect(halfway.done + acting.length).toBeLessThan(WORKFLOWS);

    const { job } = await runBulkJob(created.id);

    expect(timesFired("abortAfterBulkAction")).toBe(1);
    expect(job).toMatchObject({ status: "done", matched: WORKFLOWS, done: WORKFLOWS, failed: 0, errors: [] });
    for (let i = 0; i < ids.length; i += 25) {
      await Promise.all(
        ids.slice(i, i + 25).map(async (id) => {
          const [workflow, history] = await Promise.all([api("GET", `/v1/workflows/${id}`), api("GET", `/v1/workflows/${id}/history`)]);
          expect(workflow.body.status, id).toBe("cancelled");
          const cancels = history.body.events.filter((event: { type: string; data?: { action?: string } }) => event.type === "operator_action" && event.data?.action === "cancel");
          expect(cancels, id).toHaveLength(1);
        }),
      );
    }
  });
});
