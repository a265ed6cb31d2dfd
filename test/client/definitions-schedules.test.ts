import { describe, expect, it } from "vitest";
import { uniqueId } from "../helpers/api";
import { dailySpec, waitingDefinition } from "../helpers/schedules";
import { deliverStarts } from "../helpers/starts";
import { clientFor } from "./client";

const client = clientFor();

describe("definitions through the typed client", () => {
  it("publishes versions, reads the latest and a given one, and lists the names and one name's versions", async () => {
    const name = uniqueId("client-def");
    expect((await client.definitions.publish(name, waitingDefinition(name))).version).toBe(1);
    const second = { ...waitingDefinition(name), steps: [{ id: "hold", waitForEvent: { event: "later", timeoutMs: 60_000 } }] };
    expect((await client.definitions.publish(name, second)).version).toBe(2);

    expect((await client.definitions.get(name)).version).toBe(2);
    expect((await client.definitions.get(name, 1)).definition.steps[0]).toMatchObject({ id: "hold" });
    expect((await client.definitions.list({ limit: 100 })).definitions.map((listed) => listed.name)).toContain(name);
    const versions = await client.definitions.versions(name, { limit: 1 });
    expect(versions.versions.map((listed) => listed.version)).toEqual([2]);
    expect((await client.definitions.versions(name, { cursor: versions.nextCursor })).versions.map((listed) => listed.version)).toEqual([1]);
  });
});

describe("schedules through the typed client", () => {
  it("creates, reads, lists, pauses, resumes, triggers and deletes a schedule", async () => {
    const id = uniqueId("client-schedule");
    const created = await client.schedules.create(dailySpec(id).spec);
    expect(created.id).toBe(id);
    expect((await client.schedules.get(id)).id).toBe(id);
    expect((await client.schedules.list()).schedules.map((listed) => listed.id)).toContain(id);
    expect((await client.schedules.pause(id)).paused).toBe(true);
    expect((await client.schedules.resume(id)).paused).toBe(false);
    await client.schedules.trigger(id);
    expect(await client.schedules.delete(id)).toEqual({ id, deleted: true });
    await expect(client.schedules.get(id)).rejects.toMatchObject({ status: 404, code: "not_found" });
  });

  it("reads the tenant's metrics", async () => {
    const metrics = await client.metrics();
    expect(metrics).toHaveProperty("asOf");
  });

  it("reads the tenant's metrics series, and throws a bad range as the API's 400", async () => {
    const series = await client.metricsSeries({ from: "2024-05-01T00:00:00Z", to: "2024-05-01T01:00:00Z", stepMs: "900000" });
    expect(series.series.map((point) => point.at)).toEqual([0, 1, 2, 3].map((i) => Date.parse("2024-05-01T00:00:00Z") + i * 900_000));
    expect((await client.metricsSeries()).series).toHaveLength(60);
    await expect(client.metricsSeries({ stepMs: "90000" })).rejects.toMatchObject({ status: 400, code: "validation_failed" });
  });

  it("pages the tenant's start dead letters", async () => {
    await deliverStarts([1, 2].map((n) => ({ id: `client-dead-${n}`, body: { tenant: "default", start: { definition: { name: "no-steps", steps: [] } } } })));
    const first = await client.startDeadLetters({ limit: "1" });
    expect(first.deadLetters.map((letter) => [letter.messageId, letter.error.code])).toEqual([["client-dead-2", "validation_failed"]]);
    const second = await client.startDeadLetters({ limit: "1", cursor: first.nextCursor });
    expect(second.deadLetters.map((letter) => letter.messageId)).toEqual(["client-dead-1"]);
  });
});
