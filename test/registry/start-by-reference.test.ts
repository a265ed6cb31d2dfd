import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { api, getWorkflow, historyOf, uniqueId, waitForStatus } from "../helpers/api";
import { hashOf, publishNew, read, startByRef, versioned } from "../helpers/registry";
import { json, mockRemote } from "../helpers/remote";

let remote: ReturnType<typeof mockRemote>;
beforeEach(() => {
  remote = mockRemote(() => json({ ok: true }));
});
afterEach(() => vi.restoreAllMocks());

const NAME = "fulfil";
let hashes: string[];

beforeAll(async () => {
  hashes = [];
  for (const [index, tag] of ["v1", "v2", "v3"].entries()) hashes.push((await publishNew(versioned(NAME, tag), index + 1)).hash);
});

describe("POST /v1/workflows with a definitionRef", () => {
  it("runs the latest version when none is named, and its view says which: name, version and hash", async () => {
    const { id, response } = await startByRef({ name: NAME }, { input: { order: 7 } });

    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body).toMatchObject({ id, name: NAME, input: { order: 7 }, definition: { name: NAME, version: 3, hash: hashes[2] } });
    expect(response.body.steps.map((step: { id: string }) => step.id)).toEqual(["step-v3"]);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.definition).toEqual({ name: NAME, version: 3, hash: hashes[2] });
    expect(remote.callsTo("/step-v3")).toHaveLength(1);
  });

  it("runs the version it names", async () => {
    const { id, response } = await startByRef({ name: NAME, version: 1 });

    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.definition).toEqual({ name: NAME, version: 1, hash: hashes[0] });
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps.map((step: { id: string }) => step.id)).toEqual(["step-v1"]);
    expect(remote.callsTo("/step-v1").map((call) => call.headers["shepherd-workflow-id"])).toContain(id);
  });

  it("records the definition it started with in the history", async () => {
    const { id } = await startByRef({ name: NAME, version: 2 });

    const started = (await historyOf(id)).find((event) => event.type === "workflow_started");

    expect(started?.data).toEqual({ name: NAME, definition: { name: NAME, version: 2, hash: hashes[1] } });
  });

  it("answers the same start again with 200 and the same workflow", async () => {
    const id = uniqueId("by-ref");
    const first = await startByRef({ name: NAME, version: 2 }, { id });
    const again = await startByRef({ name: NAME, version: 2 }, { id });

    expect(first.response.status).toBe(201);
    expect(again.response.status).toBe(200);
    expect(again.response.body.id).toBe(id);
    expect(again.response.body.definition).toEqual(first.response.body.definition);
  });

  it("answers another reference under the same id with 409", async () => {
    const id = uniqueId("by-ref");
    await startByRef({ name: NAME, version: 1 }, { id });

    const other = await startByRef({ name: NAME, version: 2 }, { id });

    expect(other.response.status).toBe(409);
    expect(other.response.body.error.code).toBe("conflict");
    expect((await getWorkflow(id)).definition.version).toBe(1);
  });

  it.each<[string, { name: string; version?: number }, string]>([
    ["a name with no version", { name: "never-published" }, 'No definition "never-published"'],
    ["a version that does not exist", { name: NAME, version: 4 }, `No version 4 of definition "${NAME}"`],
  ])("answers %s with 404 naming it, and starts nothing", async (_what, ref, message) => {
    const { id, response } = await startByRef(ref);

    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("not_found");
    expect(response.body.error.message).toContain(message);
    expect((await read(`/v1/workflows/${id}`)).status).toBe(404);
  });
});

describe("POST /v1/workflows with neither or both of definition and definitionRef", () => {
  it.each<[string, Record<string, unknown>, (string | number)[], RegExp]>([
    ["neither", {}, ["definition"], /give a definition, or a definitionRef/],
    ["both", { definition: versioned("inline", "x"), definitionRef: { name: NAME } }, ["definitionRef"], /not both/],
    ["a definitionRef with version 0", { definitionRef: { name: NAME, version: 0 } }, ["definitionRef", "version"], /./],
    ["a definitionRef without a name", { definitionRef: { version: 1 } }, ["definitionRef", "name"], /./],
    ["a definitionRef with an unknown field", { definitionRef: { name: NAME, latest: true } }, ["definitionRef"], /./],
  ])("answers %s with 400 naming the problem, and starts nothing", async (_what, fields, path, message) => {
    const id = uniqueId("bad-ref");

    const response = await api("POST", "/v1/workflows", { id, ...fields });

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    const issues = response.body.error.details.filter((issue: { path: unknown }) => JSON.stringify(issue.path) === JSON.stringify(path));
    expect(issues.map((issue: { message: string }) => issue.message), JSON.stringify(response.body)).toContainEqual(expect.stringMatching(message));
    expect((await read(`/v1/workflows/${id}`)).status).toBe(404);
  });
});

describe("a workflow started with an inline definition", () => {
  it("shows its definition's name and content hash, with no version: the same hash a registry version of that content has", async () => {
    const { id, response } = await (async () => {
      const workflowId = uniqueId("inline");
      return { id: workflowId, response: await api("POST", "/v1/workflows", { id: workflowId, definition: versioned(NAME, "v2") }) };
    })();

    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.definition).toEqual({ name: NAME, hash: hashes[1] });
    expect(hashes[1]).toBe(await hashOf(versioned(NAME, "v2")));
    await waitForStatus(id, "completed");
  });
});
