import { describe, expect, it } from "vitest";
import { api, bearer } from "../helpers/api";
import { hashOf, publish, publishNew, read, versioned } from "../helpers/registry";
import { httpStep, REMOTE } from "../helpers/remote";

/** Storage is shared by the tests of this file: each test publishes under its own name. */
let counter = 0;
const uniqueName = (prefix: string) => `${prefix}-${++counter}`;

async function expectNothingStored(name: string) {
  const response = await read(`/v1/definitions/${name}`);
  expect(response.status, JSON.stringify(response.body)).toBe(404);
}

describe("PUT /v1/definitions/{name}", () => {
  it("stores each new content as the next version, 1, 2, 3, with the hash of its content and when it was stored", async () => {
    const name = uniqueName("order");
    const before = Date.now();

    const first = await publishNew(versioned(name, "a"), 1);
    const second = await publishNew(versioned(name, "b"), 2);
    const third = await publishNew(versioned(name, "c", { onFailure: "fail" }), 3);

    expect(first).toEqual({ name, version: 1, hash: await hashOf(versioned(name, "a")), createdAt: expect.any(Number) });
    expect(third.hash).toBe(await hashOf(versioned(name, "c", { onFailure: "fail" })));
    expect(new Set([first.hash, second.hash, third.hash]).size).toBe(3);
    expect(first.createdAt).toBeGreaterThanOrEqual(before);
    expect(third.createdAt).toBeGreaterThanOrEqual(first.createdAt);
    expect((await read(`/v1/definitions/${name}`)).body).toMatchObject({ version: 3 });
  });

  it("answers content equal to a version it holds with 200 and that version, whatever the key order, and stores nothing", async () => {
    const name = uniqueName("order");
    const first = await publishNew({ name, onFailure: "compensate", steps: [httpStep("charge")] }, 1);
    await publishNew({ name, steps: [httpStep("charge"), httpStep("ship")] }, 2);

    // Version 1's content again, its keys in another order: it is still version 1.
    const again = await publish({ steps: [{ action: { body: { step: "charge" }, url: `${REMOTE}/charge`, type: "http" }, id: "charge" }], onFailure: "compensate", name });

    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toEqual(first);
    expect((await read(`/v1/definitions/${name}`)).body).toMatchObject({ version: 2 });
    expect((await read(`/v1/definitions/${name}/versions/3`)).status).toBe(404);
  });

  it("refuses a body whose name is not the path's with 400 naming name, and stores nothing", async () => {
    const name = uniqueName("order");

    const response = await api("PUT", `/v1/definitions/${name}`, versioned("another-name", "a"));

    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "validation_failed", message: expect.stringContaining(`name must be "${name}"`) });
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ path: ["name"] }));
    await expectNothingStored(name);
    await expectNothingStored("another-name");
  });

  it.each<[string, Record<string, unknown>, (string | number)[]]>([
    ["a dependency cycle", { steps: [httpStep("a", { dependsOn: ["b"] }), httpStep("b", { dependsOn: ["a"] })] }, ["steps", 0, "dependsOn"]],
    ["a step of no kind", { steps: [{ id: "nothing" }] }, ["steps", 0]],
    ["no steps", { steps: [] }, ["steps"]],
    ["an unknown field", { steps: [httpStep("a")], retries: 3 }, []],
    ["a template reading a later step", { steps: [httpStep("a", { action: { type: "http", url: `${REMOTE}/a`, body: "{{ steps.b.output }}" } }), httpStep("b")] }, ["steps", 0, "action"]],
    ["a target that is not an https URL", { steps: [{ id: "a", action: { type: "http", url: "ftp://files.example/x" } }] }, ["steps", 0, "action", "url"]],
  ])("refuses a definition with %s with 400 naming where, and stores nothing", async (_what, fields, path) => {
    const name = uniqueName("broken");

    const response = await api("PUT", `/v1/definitions/${name}`, { name, ...fields });

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    expect(response.body.error.details.map((issue: { path: unknown }) => issue.path)).toContainEqual(path);
    await expectNothingStored(name);
  });

  it("refuses a target outside the tenant's ALLOWED_TARGETS with 400 naming the URL, and stores nothing", async () => {
    const name = uniqueName("gamma-order");

    const response = await api("PUT", `/v1/definitions/${name}`, versioned(name, "a"), { headers: bearer("gamma") });

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.details).toContainEqual(
      expect.objectContaining({ path: ["steps", 0, "action", "url"], message: "host remote.example is not in this tenant's ALLOWED_TARGETS" }),
    );
    expect((await read(`/v1/definitions/${name}`, "gamma")).status).toBe(404);
  });

  it("gives publishes of different content made at once distinct versions, 1 to n, with no gap", async () => {
    const name = uniqueName("busy");
    const tags = ["a", "b", "c", "d", "e", "f"];

    const responses = await Promise.all(tags.map((tag) => publish(versioned(name, tag))));

    expect(responses.map((response) => response.status)).toEqual(tags.map(() => 201));
    expect(responses.map((response) => response.body.version).sort()).toEqual([1, 2, 3, 4, 5, 6]);
    // Each version holds the content its publish sent.
    for (const [index, tag] of tags.entries()) {
      const stored = await read(`/v1/definitions/${name}/versions/${responses[index]!.body.version}`);
      expect(stored.body.definition).toEqual(versioned(name, tag));
    }
  });

  it("answers the same new content published twice at once with one version: 201 for one, 200 for the other", async () => {
    const name = uniqueName("twice");

    const responses = await Promise.all([publish(versioned(name, "a")), publish(versioned(name, "a"))]);

    expect(responses.map((response) => response.status).sort()).toEqual([200, 201]);
    expect(responses.map((response) => response.body.version)).toEqual([1, 1]);
  });
});
