import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, start, uniqueId, waitForStep } from "../helpers/api";
import { hang, json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";

afterEach(() => vi.restoreAllMocks());

const tablesOf = (id: string) =>
  runInDurableObject(schedulerStub(id), (_, state) =>
    state.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").toArray().map((row) => row.name),
  );

describe("the scheduler's storage", () => {
  it("leaves an object that was only asked about a missing workflow without any storage", async () => {
    const id = uniqueId();
    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
    expect((await api("GET", `/v1/workflows/${id}/history`)).status).toBe(404);
    expect((await api("POST", `/v1/workflows/${id}/cancel`)).status).toBe(404);
    expect(await tablesOf(id)).toEqual([]);
  });

  it("creates its schema with the first workflow it stores", async () => {
    mockRemote(() => json({ ok: true }));
    const { id } = await start({ name: "schema", steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }] });
    expect(await tablesOf(id)).toEqual(expect.arrayContaining(["events", "schema_migrations", "steps", "workflow"]));
  });

  it("rewrites only the step rows a transition changed", async () => {
    mockRemote((call) => hang(call));
    const steps = ["a", "b", "c"].map((step) => ({ id: step, dependsOn: [], action: { type: "http", url: `${REMOTE}/${step}` } }));
    const { id } = await start({ name: "rows", steps });
    try {
      await waitForStep(id, "c", "running");
      const statements = await runInDurableObject(schedulerStub(id), async (instance, state) => {
        const exec = vi.spyOn(state.storage.sql, "exec");
        await instance.heartbeat("b", 1, { value: { percent: 10 } });
        return exec.mock.calls.map((call) => String(call[0]).trim().split(/\s+/).slice(0, 3).join(" "));
      });
      expect(statements.filter((statement) => statement === "INSERT INTO steps")).toHaveLength(1);
    } finally {
      await api("POST", `/v1/workflows/${id}/cancel`);
    }
  });
});
