import { afterEach, describe, expect, it, vi } from "vitest";
import { ShepherdApiError } from "../../src/client";
import { uniqueId } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { json, mockRemote } from "../helpers/remote";
import { DAY, waitStep } from "../helpers/workflow-language";
import { clientFor, remoteStep, untilStatus } from "./client";

afterEach(() => vi.restoreAllMocks());

const client = clientFor();

describe("a workflow driven through the typed client", () => {
  it("starts, completes, and shows its history, diagnosis and place in the list", async () => {
    mockRemote((call) => json({ done: new URL(call.url).pathname }));
    const id = uniqueId("client");
    const started = await client.start({ id, definition: { name: "client-order", steps: [remoteStep("reserve"), remoteStep("ship")] }, input: { n: 1 } });
    expect(started.id).toBe(id);

    const workflow = await untilStatus(client, id, "completed");
    expect(workflow.steps.map((step) => step.status)).toEqual(["succeeded", "succeeded"]);

    const { events } = await client.history(id);
    expect(events[0]?.type).toBe("workflow_started");
    expect(events.at(-1)?.type).toBe("workflow_completed");
    const firstPage = await client.history(id, { limit: 1 });
    expect(firstPage.events).toHaveLength(1);

    const diagnosis = await client.diagnosis(id);
    expect(diagnosis).toMatchObject({ status: "completed", healthy: true, problems: [] });

    const list = await client.list({ name: "client-order", status: "completed" });
    expect(list.workflows.map((listed) => listed.id)).toContain(id);
  });

  it("redrives a failed workflow once its remote recovers", async () => {
    let down = true;
    mockRemote(() => (down ? json({ error: "declined" }, 400) : json({ ok: true })));
    const id = uniqueId("client");
    await client.start({ id, definition: { name: "client-redrive", onFailure: "fail", defaults: FAST, steps: [remoteStep("charge")] } });
    await untilStatus(client, id, "failed");

    down = false;
    await client.redrive(id);
    const workflow = await untilStatus(client, id, "completed");
    expect(workflow.steps[0]?.status).toBe("succeeded");
  });

  it("compensates a workflow that needs attention", async () => {
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/ship" ? json({ error: "no" }, 400) : json({ ref: "r" })));
    const id = uniqueId("client");
    const charge = remoteStep("charge", { compensateAt: "undo-charge" });
    await client.start({ id, definition: { name: "client-saga", onFailure: "escalate", defaults: FAST, steps: [charge, remoteStep("ship")] } });
    await untilStatus(client, id, "needs_attention");

    await client.compensate(id);
    const workflow = await untilStatus(client, id, "compensated");
    expect(workflow.steps.map((step) => step.status)).toEqual(["compensated", "failed"]);
    expect(remote.callsTo("/undo-charge")).toHaveLength(1);
  });

  it("sends an event that a waiting step takes", async () => {
    const id = uniqueId("client");
    await client.start({ id, definition: { name: "client-wait", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] } });
    await vi.waitFor(async () => expect((await client.get(id)).steps[0]?.status).toBe("waiting"), { timeout: 10_000, interval: 20 });

    const answer = await client.sendEvent(id, { event: "approved", payload: { by: "ops" } });
    expect(answer.consumed).toBe(true);
    const workflow = await untilStatus(client, id, "completed");
    expect(workflow.steps[0]?.output).toEqual({ by: "ops" });
  });

  it("waits for the result: the status alone while it runs, then the output once it has ended", async () => {
    const id = uniqueId("client");
    await client.start({ id, definition: { name: "client-result", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] } });
    expect(await client.result(id, { waitMs: 0 })).toEqual({ id, status: "running" });

    const waiting = client.result(id, { waitMs: 60_000 });
    await client.sendEvent(id, { event: "approved", payload: { by: "ops" } });

    expect(await waiting).toEqual({ id, status: "completed", output: { approval: { by: "ops" } } });
  });

  it("pauses, resumes and terminates", async () => {
    const id = uniqueId("client");
    await client.start({ id, definition: { name: "client-control", steps: [waitStep("hold", { event: "go", timeoutMs: DAY })] } });
    expect((await client.pause(id)).status).toBe("paused");
    expect((await client.resume(id)).status).not.toBe("paused");
    expect((await client.terminate(id, { reason: "not needed" })).status).toBe("terminated");
  });
});

describe("scheduled starts and batches through the typed client", () => {
  it("starts a workflow later, with startDelayMs or an ISO 8601 startAt", async () => {
    const definition = { name: "client-later", steps: [waitStep("hold", { event: "done", timeoutMs: DAY })] };
    const at = new Date(Date.now() + DAY);

    const delayed = await client.start({ id: uniqueId("client"), definition, startDelayMs: 60_000 });
    const timed = await client.start({ id: uniqueId("client"), definition, startAt: at.toISOString() });

    expect(delayed.status).toBe("scheduled");
    expect(timed).toMatchObject({ status: "scheduled", startAt: at.getTime() });
    expect((await client.list({ name: "client-later", status: "scheduled" })).workflows.map((listed) => listed.id)).toEqual(expect.arrayContaining([delayed.id, timed.id]));
  });

  it("starts a batch, each item answered in order, a refused one without throwing", async () => {
    const definition = { name: "client-batch", steps: [waitStep("hold", { event: "done", timeoutMs: DAY })] };
    const id = uniqueId("client");

    const { results } = await client.startBatch([{ id, definition }, { id, definition, input: { other: true } }, { definition: { name: "bad", steps: [] } }]);

    expect(results.map((result) => result.status)).toEqual([201, 409, 400]);
    expect(results[0]?.workflow?.id).toBe(id);
    expect(results[2]?.error?.code).toBe("validation_failed");
    await expect(client.startBatch([])).rejects.toMatchObject({ status: 400, code: "validation_failed" });
  });
});

describe("errors from the API", () => {
  it("throws a ShepherdApiError with the status and code of a 404", async () => {
    const error = await client.get("no-such-workflow").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ShepherdApiError);
    expect(error).toMatchObject({ status: 404, code: "not_found" });
  });

  it("throws the validation details of a 400", async () => {
    const error = await client.start({ id: uniqueId("client"), definition: { name: "bad", steps: [] } }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, code: "validation_failed" });
    expect((error as ShepherdApiError).details?.length).toBeGreaterThan(0);
  });

  it("throws a 409 for an action the workflow's state refuses, without retrying it", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId("client");
    await client.start({ id, definition: { name: "client-done", steps: [remoteStep("only")] } });
    await untilStatus(client, id, "completed");
    await expect(client.compensate(id)).rejects.toMatchObject({ status: 409, code: "conflict" });
  });

  it("rejects a wrong request body at compile time", () => {
    // Types only: the call is never made.
    const typed = () =>
      // @ts-expect-error `id` is a string, and `definition` is required
      client.start({ id: 3 });
    expect(typeof typed).toBe("function");
  });
});
