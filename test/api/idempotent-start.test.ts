import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { api, getWorkflow, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";

const ID_FORMAT = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

let remote: ReturnType<typeof mockRemote>;
beforeEach(() => {
  remote = mockRemote(() => json({ ok: true }));
});
afterEach(() => vi.restoreAllMocks());

function definition() {
  return {
    name: "idempotent-start",
    onFailure: "fail",
    steps: [
      { id: "reserve", action: { type: "http", url: `${REMOTE}/reserve`, method: "POST", body: { sku: "{{ input.sku }}", qty: 1 } } },
      { id: "ship", dependsOn: ["reserve"], action: { type: "http", url: `${REMOTE}/ship`, body: { order: "{{ workflow.id }}" } } },
    ],
  };
}

/** The same request as `definition()` with `input`, every object's keys written in another order. */
function reorderedBody(id: string) {
  return {
    input: { note: "gift", sku: "A-1" },
    definition: {
      steps: [
        { action: { body: { qty: 1, sku: "{{ input.sku }}" }, method: "POST", url: `${REMOTE}/reserve`, type: "http" }, id: "reserve" },
        { action: { body: { order: "{{ workflow.id }}" }, url: `${REMOTE}/ship`, type: "http" }, dependsOn: ["reserve"], id: "ship" },
      ],
      onFailure: "fail",
      name: "idempotent-start",
    },
    id,
  };
}

const INPUT = { sku: "A-1", note: "gift" };

function startRequest(body: unknown) {
  return api("POST", "/v1/workflows", body);
}

/** The fake remote's calls made for one workflow, as "/path" strings in order. */
function pathsCalledFor(id: string): string[] {
  return remote.calls.filter((call) => call.headers["shepherd-workflow-id"] === id).map((call) => new URL(call.url).pathname);
}

describe("starting a workflow again with the same id", () => {
  it("answers an identical body with 200 and the workflow it already started", async () => {
    const id = uniqueId("again");
    const first = await startRequest({ id, definition: definition(), input: INPUT });
    expect(first.status, JSON.stringify(first.body)).toBe(201);

    const second = await startRequest({ id, definition: definition(), input: INPUT });

    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body).toMatchObject({ id, name: "idempotent-start", input: INPUT, createdAt: first.body.createdAt });
    expect(second.body.steps.map((step: { id: string }) => step.id)).toEqual(["reserve", "ship"]);
    await waitForStatus(id, "completed");
  });

  it("case 23 (idempotent create): runs the workflow once however often the start is repeated", async () => {
    const id = uniqueId("again");
    const body = { id, definition: definition(), input: INPUT };
    expect((await startRequest(body)).status).toBe(201);
    expect((await startRequest(body)).status).toBe(200);
    expect((await startRequest(body)).status).toBe(200);

    await waitForStatus(id, "completed");

    expect(pathsCalledFor(id)).toEqual(["/reserve", "/ship"]);
  });

  it("treats a body whose keys are in another order as identical", async () => {
    const id = uniqueId("again");
    const first = await startRequest({ id, definition: definition(), input: INPUT });
    expect(first.status, JSON.stringify(first.body)).toBe(201);

    const second = await startRequest(reorderedBody(id));

    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.createdAt).toBe(first.body.createdAt);
    await waitForStatus(id, "completed");
  });

  it("still answers 200 with the workflow once it has completed", async () => {
    const id = uniqueId("again");
    const first = await startRequest({ id, definition: definition(), input: INPUT });
    expect(first.status).toBe(201);
    await waitForStatus(id, "completed");

    const second = await startRequest({ id, definition: definition(), input: INPUT });

    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body).toMatchObject({ id, status: "completed", createdAt: first.body.createdAt });
  });

  it("refuses a different input with 409 conflict and keeps the original", async () => {
    const id = uniqueId("again");
    expect((await startRequest({ id, definition: definition(), input: INPUT })).status).toBe(201);

    const second = await startRequest({ id, definition: definition(), input: { ...INPUT, sku: "B-2" } });

    expect(second.status, JSON.stringify(second.body)).toBe(409);
    expect(second.body.error).toMatchObject({ code: "conflict", message: expect.any(String) });
    expect((await getWorkflow(id)).input).toEqual(INPUT);
    await waitForStatus(id, "completed");
  });

  it("refuses a body that leaves out the input it first had with 409 conflict", async () => {
    const id = uniqueId("again");
    expect((await startRequest({ id, definition: definition(), input: INPUT })).status).toBe(201);

    const second = await startRequest({ id, definition: definition() });

    expect(second.status, JSON.stringify(second.body)).toBe(409);
    expect(second.body.error.code).toBe("conflict");
    await waitForStatus(id, "completed");
  });

  it("refuses a different definition with 409 conflict and keeps the original", async () => {
    const id = uniqueId("again");
    expect((await startRequest({ id, definition: definition(), input: INPUT })).status).toBe(201);
    const changed = definition();
    changed.steps[1] = { id: "ship", dependsOn: ["reserve"], action: { type: "http", url: `${REMOTE}/ship-express`, body: { order: "{{ workflow.id }}" } } };

    const second = await startRequest({ id, definition: changed, input: INPUT });

    expect(second.status, JSON.stringify(second.body)).toBe(409);
    expect(second.body.error).toMatchObject({ code: "conflict", message: expect.any(String) });
    await waitForStatus(id, "completed");
    expect(pathsCalledFor(id)).toEqual(["/reserve", "/ship"]);
  });

  it("creates one workflow when two identical starts race", async () => {
    const id = uniqueId("race");
    const body = { id, definition: definition(), input: INPUT };

    const responses = await Promise.all([startRequest(body), startRequest(body)]);

    expect(responses.map((response) => response.status).sort()).toEqual([200, 201]);
    expect(responses[0]?.body.createdAt).toBe(responses[1]?.body.createdAt);
    await waitForStatus(id, "completed");
    expect(pathsCalledFor(id)).toEqual(["/reserve", "/ship"]);
  });
});

describe("starting a workflow without an id", () => {
  it("makes an id in the contract's format and answers 201", async () => {
    const response = await startRequest({ definition: definition(), input: INPUT });

    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.id).toMatch(ID_FORMAT);
    expect((await getWorkflow(response.body.id)).input).toEqual(INPUT);
    await waitForStatus(response.body.id, "completed");
  });

  it("starts a new workflow for each post, even with identical bodies", async () => {
    const body = { definition: definition(), input: INPUT };

    const first = await startRequest(body);
    const second = await startRequest(body);

    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.id).not.toBe(first.body.id);
    await waitForStatus(first.body.id, "completed");
    await waitForStatus(second.body.id, "completed");
    expect(pathsCalledFor(first.body.id)).toEqual(["/reserve", "/ship"]);
    expect(pathsCalledFor(second.body.id)).toEqual(["/reserve", "/ship"]);
  });
});
