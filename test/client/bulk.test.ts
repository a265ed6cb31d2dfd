// Bulk jobs through the typed client: started, read while the test fires their alarm, listed; a refusal thrown.
import { describe, expect, it } from "vitest";
import { uniqueId } from "../helpers/api";
import { listedIds, runBulkJob, startWaiting } from "../helpers/bulk";
import { clientFor } from "./client";

const client = clientFor();

describe("bulk jobs through the typed client", () => {
  it("starts a bulk pause, reads it done with its counts, and lists it", async () => {
    const name = uniqueId("client-bulk");
    const ids = await startWaiting(name, 2);
    await expect.poll(async () => (await listedIds(name)).length, { timeout: 10_000 }).toBe(2);

    const job = await client.bulk.start({ action: "pause", filter: { name }, reason: "maintenance window" });
    expect(job).toMatchObject({ action: "pause", status: "running", reason: "maintenance window" });
    await runBulkJob(job.id);

    expect(await client.bulk.get(job.id)).toMatchObject({ status: "done", matched: 2, done: 2, failed: 0 });
    expect((await client.bulk.list({ limit: "100" })).jobs.map((listed) => listed.id)).toContain(job.id);
    expect((await Promise.all(ids.map((id) => client.get(id)))).map((workflow) => workflow.status)).toEqual(["paused", "paused"]);
  });

  it("throws the API's refusal of an empty filter", async () => {
    await expect(client.bulk.start({ action: "cancel", filter: {} })).rejects.toMatchObject({ status: 400, code: "validation_failed" });
  });
});
