// POST /v1/workflows/batch: each item started exactly as POST /v1/workflows would start it alone, answered in item
// order, one bad item refusing no other.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { forgetQueueLagReads } from "../../src/admission/queue-lag-monitor";
import { api, bearer, getWorkflow, uniqueId, waitForStatus } from "../helpers/api";
import { httpStep, json, mockRemote } from "../helpers/remote";
import { sleep } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

const definition = (name = "batched") => ({ name, steps: [httpStep("only")] });
/** A workflow that waits for an event: nothing to call, so nothing is left in flight when its test ends. */
const waiting = (name = "batched-waits") => ({ name, steps: [{ id: "hold", waitForEvent: { event: "done", timeoutMs: 60_000 } }] });

function batch(workflows: unknown[], tenant: "default" | "beta" = "default") {
  return api("POST", "/v1/workflows/batch", { workflows }, { headers: bearer(tenant) });
}

describe("POST /v1/workflows/batch", () => {
  it("answers each item in item order: 201 new, 200 a repeat, 400 a bad body, 404 an unknown definition, 409 an id taken by another body", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const [fresh, repeated, taken] = [uniqueId("fresh"), uniqueId("repeat"), uniqueId("taken")];
    expect((await api("POST", "/v1/workflows", { id: repeated, definition: definition() })).status).toBe(201);
    expect((await api("POST", "/v1/workflows", { id: taken, definition: definition(), input: { n: 1 } })).status).toBe(201);

    const response = await batch([
      { id: fresh, definition: definition(), input: { n: 1 } },
      { id: repeated, definition: definition() },
      { id: uniqueId("bad"), definition: { name: "no-steps", steps: [] } },
      { id: uniqueId("unknown"), definitionRef: { name: "never-published" } },
      { id: taken, definition: definition(), input: { n: 2 } },
      { definition: definition("id-made-for-it") },
    ]);

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const results = response.body.results as { index: number; status: number; workflow?: any; error?: any }[];
    expect(results.map((result) => [result.index, result.status])).toEqual([[0, 201], [1, 200], [2, 400], [3, 404], [4, 409], [5, 201]]);
    expect(results[0]!.workflow).toMatchObject({ id: fresh, name: "batched", input: { n: 1 } });
    expect(results[1]!.workflow).toMatchObject({ id: repeated });
    expect(results[2]!.error).toMatchObject({ code: "validation_failed", details: [expect.objectContaining({ path: ["definition", "steps"] })] });
    expect(results[2]!.workflow).toBeUndefined();
    expect(results[3]!.error).toMatchObject({ code: "not_found", message: expect.stringContaining("never-published") });
    expect(results[4]!.error).toMatchObject({ code: "conflict" });
    expect(results[5]!.workflow.id).toMatch(/^wf_/);

    // Each started as if alone: the new ones run, the repeat ran once, the refused ones stored nothing.
    await waitForStatus(fresh, "completed");
    await waitForStatus(results[5]!.workflow.id, "completed");
    expect(remote.requestsFor(`${repeated}:only`)).toBe(1);
    expect((await getWorkflow(taken)).input).toEqual({ n: 1 });
  });

  it("answers a batch sent again with 200 for every item: idempotent by id", async () => {
    const items = [uniqueId("again"), uniqueId("again")].map((id) => ({ id, definition: waiting() }));

    const first = await batch(items);
    const second = await batch(items);

    expect(first.body.results.map((result: { status: number }) => result.status)).toEqual([201, 201]);
    expect(second.body.results.map((result: { status: number }) => result.status)).toEqual([200, 200]);
  });

  it("answers two items of one id as two starts one after the other: the first 201, then 200 for its body, 409 for another", async () => {
    const id = uniqueId("twice");

    const response = await batch([
      { id, definition: waiting(), input: { n: 1 } },
      { id, definition: waiting(), input: { n: 1 } },
      { id, definition: waiting(), input: { n: 2 } },
    ]);

    expect(response.body.results.map((result: { status: number }) => result.status)).toEqual([201, 200, 409]);
  });

  it("takes scheduled starts like single ones", async () => {
    const id = uniqueId("batch-later");

    const response = await batch([{ id, definition: waiting(), startDelayMs: 60_000 }, { id: uniqueId("past"), definition: waiting(), startAt: Date.now() - 1_000 }]);

    expect(response.body.results[0]).toMatchObject({ status: 201, workflow: { id, status: "scheduled", startAt: expect.any(Number) } });
    expect(response.body.results[1]).toMatchObject({ status: 400, error: { code: "validation_failed", details: [expect.objectContaining({ path: ["startAt"] })] } });
  });

  it("starts a hundred, each answered in order", async () => {
    const items = Array.from({ length: 100 }, () => ({ id: uniqueId("hundred"), definition: waiting() }));

    const response = await batch(items);

    expect(response.status).toBe(200);
    expect(response.body.results).toHaveLength(100);
    expect(response.body.results.every((result: { index: number; status: number }, index: number) => result.index === index && result.status === 201)).toBe(true);
  });

  it("admits each item per tenant and name, as a single start: the noisy name's items get 503 overloaded, the others start", async () => {
    await env.QUEUE_LAG.getByName("task-queue").record({ queue: "shepherd-tasks", lagMs: 25_000, at: Date.now() + 60_000, deliveries: [{ tenant: "default", name: "noisy", count: 500 }] });
    forgetQueueLagReads();
    try {
      const [noisy, quiet] = [uniqueId("noisy"), uniqueId("quiet")];
      const response = await batch([{ id: noisy, definition: waiting("noisy") }, { id: quiet, definition: waiting("quiet") }]);

      expect(response.body.results.map((result: { status: number }) => result.status)).toEqual([503, 201]);
      expect(response.body.results[0].error).toMatchObject({ code: "overloaded" });
      expect((await api("GET", `/v1/workflows/${noisy}`)).status).toBe(404);
    } finally {
      await sleep(2);
      await env.QUEUE_LAG.getByName("task-queue").record({ queue: "shepherd-tasks", lagMs: 0, at: Date.now() + 120_000, deliveries: [] });
      forgetQueueLagReads();
    }
  });

  it.each([
    ["an empty list", { workflows: [] }],
    ["more than 100 starts", { workflows: Array.from({ length: 101 }, () => ({ definition: waiting() })) }],
    ["no list", {}],
    ["a list that is not one", { workflows: { id: "x" } }],
    ["a field besides the list", { workflows: [{ definition: waiting() }], extra: true }],
  ])("refuses %s with 400 and starts nothing", async (_name, body) => {
    const before = (await api("GET", "/v1/workflows?name=batched-waits&limit=100")).body.workflows.length;

    const response = await api("POST", "/v1/workflows/batch", body);

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    expect((await api("GET", "/v1/workflows?name=batched-waits&limit=100")).body.workflows.length).toBe(before);
  });

  it("starts only for the caller's tenant", async () => {
    const id = uniqueId("tenanted");

    expect((await batch([{ id, definition: waiting() }], "beta")).body.results[0].status).toBe(201);

    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
    expect((await api("GET", `/v1/workflows/${id}`, undefined, { headers: bearer("beta") })).status).toBe(200);
  });
});
