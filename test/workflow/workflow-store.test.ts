import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, getWorkflow, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { FAST } from "../helpers/policies";
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
    expect(await tablesOf(id)).toEqual(expect.arrayContaining(["history", "schema_migrations", "steps", "workflow"]));
  });

  it("writes no step row for a change to an open step: it rides on the workflow's row, which the commit writes anyway", async () => {
    mockRemote((call) => hang(call));
    const steps = ["a", "b", "c"].map((step) => ({ id: step, dependsOn: [], action: { type: "http", url: `${REMOTE}/${step}` } }));
    const { id } = await start({ name: "rows", steps });
    try {
      await waitForStep(id, "c", "running");
      const { statements, open } = await runInDurableObject(schedulerStub(id), async (instance, state) => {
        const exec = vi.spyOn(state.storage.sql, "exec");
        await instance.heartbeat("b", 1, { value: { percent: 10 } });
        const statements = exec.mock.calls.map((call) => String(call[0]).trim().split(/\s+/).slice(0, 3).join(" "));
        exec.mockRestore();
        const open = JSON.parse(state.storage.sql.exec<{ open: string }>("SELECT open_steps_json AS open FROM workflow").one().open) as Record<string, { progress?: unknown }>;
        return { statements, open };
      });
      expect(statements.filter((statement) => statement === "INSERT INTO steps")).toHaveLength(0);
      expect(statements.filter((statement) => statement === "INSERT INTO workflow")).toHaveLength(1);
      expect(Object.keys(open).sort()).toEqual(["a", "b", "c"]);
      expect(open.b!.progress).toEqual({ percent: 10 });
    } finally {
      await api("POST", `/v1/workflows/${id}/cancel`);
    }
  });

  it("writes the open steps to their own rows instead when they would make the workflow's row too large, and reads them back", async () => {
    mockRemote((call) => hang(call));
    const steps = ["a", "b", "c"].map((step) => ({ id: step, dependsOn: [], action: { type: "http", url: `${REMOTE}/${step}` } }));
    const { id } = await start({ name: "large-open", steps });
    const progress = (step: string) => ({ step, text: "x".repeat(100_000) });
    try {
      await waitForStep(id, "c", "running");
      const open = await runInDurableObject(schedulerStub(id), async (instance, state) => {
        for (const step of ["a", "b", "c"]) await instance.heartbeat(step, 1, { value: progress(step) });
        return state.storage.sql.exec<{ open: string | null }>("SELECT open_steps_json AS open FROM workflow").one().open;
      });
      expect(open).toBeNull();
      await evictDurableObject(schedulerStub(id));
      const view = await getWorkflow(id);
      for (const step of view.steps as { id: string; status: string; progress: unknown }[]) expect(step).toMatchObject({ status: "running", progress: progress(step.id) });
    } finally {
      await api("POST", `/v1/workflows/${id}/cancel`);
    }
  });

  it("writes no row for a step until it ends (an open one rides on the workflow's row), and reads one without a row as the start left it", async () => {
    mockRemote(() => json({ ok: true }));
    const definition = {
      name: "unstarted",
      defaults: FAST,
      steps: [
        { id: "go", waitForEvent: { event: "go", timeoutMs: 3_600_000 } },
        { id: "a", action: { type: "http", url: `${REMOTE}/a` } },
        { id: "b", action: { type: "http", url: `${REMOTE}/b` } },
      ],
    };
    const { id } = await start(definition);
    const stepRows = () =>
      runInDurableObject(schedulerStub(id), (_, state) => state.storage.sql.exec<{ step_id: string }>("SELECT step_id FROM steps ORDER BY position").toArray().map((row) => row.step_id));
    await waitForStep(id, "go", "waiting");
    expect(await stepRows()).toEqual([]);
    await evictDurableObject(schedulerStub(id));
    expect((await getWorkflow(id)).steps.map((step: { id: string; status: string; attempts: unknown[] }) => [step.id, step.status, step.attempts.length])).toEqual([
      ["go", "waiting", 0],
      ["a", "pending", 0],
      ["b", "pending", 0],
    ]);
    expect((await api("POST", `/v1/workflows/${id}/events`, { event: "go" })).status).toBe(202);
    await waitForStatus(id, "completed");
    expect(await stepRows()).toEqual(["go", "a", "b"]);
  });

  it("writes the plan once, in its own row, and leaves it out of every later transition", async () => {
    mockRemote((call) => hang(call));
    const { id } = await start({ name: "plan", steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }] });
    try {
      await waitForStep(id, "a", "running");
      const { stored, statements } = await runInDurableObject(schedulerStub(id), async (instance, state) => {
        const exec = vi.spyOn(state.storage.sql, "exec");
        await instance.heartbeat("a", 1, { value: 1 });
        const statements = exec.mock.calls.map((call) => String(call[0]));
        exec.mockRestore();
        return {
          stored: {
            plan: JSON.parse(state.storage.sql.exec<{ plan_json: string }>("SELECT plan_json FROM plan").one().plan_json),
            fields: JSON.parse(state.storage.sql.exec<{ state_json: string }>("SELECT state_json FROM workflow").one().state_json),
          },
          statements,
        };
      });
      expect(stored.plan).toMatchObject({ name: "plan", steps: [{ id: "a" }] });
      expect(stored.fields).not.toHaveProperty("plan");
      expect(statements.some((statement) => statement.includes("plan"))).toBe(false);
    } finally {
      await api("POST", `/v1/workflows/${id}/cancel`);
    }
  });

  it("still reads a workflow stored with its plan inside the workflow row, and moves the plan out on the next write", async () => {
    mockRemote((call) => hang(call));
    const { id } = await start({ name: "legacy", steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }] });
    try {
      await waitForStep(id, "a", "running");
      // As an object written before the plan had its own row.
      await runInDurableObject(schedulerStub(id), (_, state) => {
        const once = state.storage.sql.exec<{ plan_json: string; input_json: string }>("SELECT plan_json, input_json FROM plan").one();
        const fields = JSON.parse(state.storage.sql.exec<{ state_json: string }>("SELECT state_json FROM workflow").one().state_json);
        state.storage.sql.exec("UPDATE workflow SET state_json = ?", JSON.stringify({ ...fields, plan: JSON.parse(once.plan_json), input: JSON.parse(once.input_json) }));
        state.storage.sql.exec("DELETE FROM plan");
      });
      await evictDurableObject(schedulerStub(id));
      expect((await getWorkflow(id)).steps[0].status).toBe("running");
      const after = await runInDurableObject(schedulerStub(id), async (instance, state) => {
        await instance.heartbeat("a", 1, { value: 2 });
        return {
          planRows: state.storage.sql.exec("SELECT 1 FROM plan").toArray().length,
          fields: JSON.parse(state.storage.sql.exec<{ state_json: string }>("SELECT state_json FROM workflow").one().state_json),
        };
      });
      expect(after.planRows).toBe(1);
      expect(after.fields).not.toHaveProperty("plan");
      expect(after.fields).not.toHaveProperty("input");
      expect((await getWorkflow(id)).input).toBeNull();
    } finally {
      await api("POST", `/v1/workflows/${id}/cancel`);
    }
  });
  it("keeps the input in the workflow row of a workflow stored before the input was written beside the plan", async () => {
    mockRemote((call) => hang(call));
    const { id } = await start({ name: "older", steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }] }, { input: { n: 7 } });
    try {
      await waitForStep(id, "a", "running");
      await runInDurableObject(schedulerStub(id), (_, state) => {
        const fields = JSON.parse(state.storage.sql.exec<{ state_json: string }>("SELECT state_json FROM workflow").one().state_json);
        state.storage.sql.exec("UPDATE workflow SET state_json = ?", JSON.stringify({ ...fields, input: { n: 7 } }));
        state.storage.sql.exec("UPDATE plan SET input_json = NULL");
      });
      await evictDurableObject(schedulerStub(id));
      const fields = await runInDurableObject(schedulerStub(id), async (instance, state) => {
        await instance.heartbeat("a", 1, { value: 2 });
        return JSON.parse(state.storage.sql.exec<{ state_json: string }>("SELECT state_json FROM workflow").one().state_json);
      });
      expect(fields.input).toEqual({ n: 7 });
      expect((await getWorkflow(id)).input).toEqual({ n: 7 });
    } finally {
      await api("POST", `/v1/workflows/${id}/cancel`);
    }
  });

  it("still reads a plan and step rows stored before they had a kind, and goes on running the steps as their kinds", async () => {
    mockRemote((call) => hang(call));
    const { id } = await start({
      name: "untagged",
      steps: [
        { id: "a", action: { type: "http", url: `${REMOTE}/a` } },
        { id: "nap", dependsOn: [], sleep: { durationMs: 3_600_000 } },
      ],
    });
    try {
      await waitForStep(id, "a", "running");
      // As an object written before the plan and the steps had `kind`.
      await runInDurableObject(schedulerStub(id), (_, state) => {
        const plan = JSON.parse(state.storage.sql.exec<{ plan_json: string }>("SELECT plan_json FROM plan").one().plan_json);
        const untagged = { ...plan, steps: plan.steps.map(({ kind: _kind, ...step }: { kind: string }) => step) };
        state.storage.sql.exec("UPDATE plan SET plan_json = ?", JSON.stringify(untagged));
        for (const row of state.storage.sql.exec<{ step_id: string; state_json: string }>("SELECT step_id, state_json FROM steps").toArray()) {
          const { kind: _kind, ...step } = JSON.parse(row.state_json);
          state.storage.sql.exec("UPDATE steps SET state_json = ? WHERE step_id = ?", JSON.stringify(step), row.step_id);
        }
      });
      await evictDurableObject(schedulerStub(id));
      const workflow = await getWorkflow(id);
      expect(workflow.steps.map((step: { kind: string; status: string }) => [step.kind, step.status])).toEqual([
        ["action", "running"],
        ["sleep", "sleeping"],
      ]);
      expect(workflow.steps[1].sleepingUntil).toEqual(expect.any(Number));
    } finally {
      await api("POST", `/v1/workflows/${id}/cancel`);
    }
  });
});
