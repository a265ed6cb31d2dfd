import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault } from "../../src/dev/faults";
import { api, historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { hang, json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { FAST } from "../engine/fixtures";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

const definition = (scheduleToStartMs: number) => ({
  name: "crash",
  defaults: { ...FAST, timeouts: { ...FAST.timeouts, scheduleToStartMs } },
  steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }],
});

describe("case 13: crash mid-transition", () => {
  it("keeps the whole start after the object dies between persisting and sending; the retried start is idempotent and the lost send is recovered", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    // The object resets right after committing the start (state, history, alarm), before the queue send.
    injectFault("abortAfterPersist", { probability: 1, times: 1 });
    const first = await api("POST", "/v1/workflows", { id, definition: definition(300) });
    // The abort came before the commit was durable, so none of it survived; the front door retried the
    // (idempotent) start on a fresh stub, which started the workflow whole.
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ id, status: "running", steps: [{ id: "a", status: "scheduled", attempt: 1 }] });
    const again = await api("POST", "/v1/workflows", { id, definition: definition(300) });
    expect(again.status).toBe(200);

    // Whole transition, once: one start in the history, not a half or a double one.
    const types = (await historyOf(id)).map((event) => event.type);
    expect(types.filter((type) => type === "workflow_started")).toHaveLength(1);

    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts.at(-1).status).toBe("succeeded");
    expect(remote.requestsFor(`${id}:a`)).toBe(1);
    await vi.waitFor(async () => expect((await indexRow(id))?.status).toBe("completed"));
  });

  it("applies a report whole or not at all when the object dies right after committing it, and a repeated report changes nothing", async () => {
    mockRemote((call) => hang(call));
    const { id } = await start(definition(5_000));
    await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${id}`)).body.steps[0].status).toBe("running"));
    const stub = () => schedulerStub(id);

    const before = await historyOf(id);
    injectFault("abortAfterPersist", { probability: 1, times: 1 });
    // The object dies right after applying the success, before the write was durable: none of it stays.
    const crash = await stub()
      .report("a", 1, { type: "succeeded", output: { done: true } })
      .then(() => undefined, (error: unknown) => error);
    expect(crash).toMatchObject({ message: "injected fault: abortAfterPersist", durableObjectReset: true });
    expect((await api("GET", `/v1/workflows/${id}`)).body).toMatchObject({ status: "running", steps: [{ status: "running" }] });
    expect(await historyOf(id)).toEqual(before);

    // The agent's retried report is applied whole, once.
    expect(await stub().report("a", 1, { type: "succeeded", output: { done: true } })).toMatchObject({ ok: true });
    expect((await api("GET", `/v1/workflows/${id}`)).body).toMatchObject({ status: "completed", steps: [{ status: "succeeded", output: { done: true } }] });
    expect((await historyOf(id)).filter((event) => event.type === "workflow_completed")).toHaveLength(1);

    const repeat = await stub().report("a", 1, { type: "succeeded", output: { done: "again" } });
    expect(repeat).toMatchObject({ ok: false, code: "gone" });
    expect((await api("GET", `/v1/workflows/${id}`)).body.steps[0].output).toEqual({ done: true });
  });
});
