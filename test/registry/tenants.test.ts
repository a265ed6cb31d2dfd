import { beforeAll, describe, expect, it } from "vitest";
import { publish, publishNew, read, startByRef, versioned } from "../helpers/registry";

/** Published by alpha only. */
const OWN = "alpha-only";
/** Published by both, with different content: each tenant counts its own versions. */
const SHARED = "shared-name";

beforeAll(async () => {
  await publishNew(versioned(OWN, "a1"), 1, "alpha");
  await publishNew(versioned(OWN, "a2"), 2, "alpha");
  await publishNew(versioned(SHARED, "a1"), 1, "alpha");
});

describe("a definition of another tenant", () => {
  it.each([`/v1/definitions/${OWN}`, `/v1/definitions/${OWN}/versions`, `/v1/definitions/${OWN}/versions/1`, `/v1/definitions/${OWN}/versions/2`])("is a 404 at %s", async (path) => {
    const response = await read(path, "beta");

    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("not_found");
  });

  it("is not in the list", async () => {
    const beta = await read("/v1/definitions?limit=100", "beta");
    const alpha = await read("/v1/definitions?limit=100", "alpha");

    expect(beta.body.definitions.map((d: { name: string }) => d.name)).not.toContain(OWN);
    expect(alpha.body.definitions.map((d: { name: string }) => d.name)).toContain(OWN);
  });

  it("cannot be started by reference: 404 naming it, and nothing starts", async () => {
    const { id, response } = await startByRef({ name: OWN }, { tenant: "beta" });

    expect(response.status).toBe(404);
    expect(response.body.error.message).toContain(`"${OWN}"`);
    expect((await read(`/v1/workflows/${id}`, "beta")).status).toBe(404);
    expect((await read(`/v1/workflows/${id}`, "alpha")).status).toBe(404);
  });

  it("does not stop another tenant from publishing the same name: its versions start at 1, and neither sees the other's", async () => {
    const beta = await publishNew(versioned(SHARED, "b1"), 1, "beta");
    const betaAgain = await publishNew(versioned(SHARED, "b2"), 2, "beta");

    expect((await read(`/v1/definitions/${SHARED}`, "alpha")).body).toMatchObject({ version: 1, definition: versioned(SHARED, "a1") });
    expect((await read(`/v1/definitions/${SHARED}`, "beta")).body).toMatchObject({ version: 2, hash: betaAgain.hash, definition: versioned(SHARED, "b2") });
    expect((await read(`/v1/definitions/${SHARED}/versions/1`, "beta")).body.hash).toBe(beta.hash);
    expect((await read(`/v1/definitions/${SHARED}/versions`, "beta")).body.versions.map((v: { hash: string }) => v.hash)).toEqual([betaAgain.hash, beta.hash]);
    expect((await read(`/v1/definitions/${SHARED}/versions`, "alpha")).body.versions.map((v: { version: number }) => v.version)).toEqual([1]);
  });

  it("does not make the same content a repeat for another tenant: it is that tenant's own new version", async () => {
    const alpha = await read(`/v1/definitions/${OWN}/versions/1`, "alpha");

    const own = await publish(versioned(OWN, "a1"), "lister");

    expect(own.status).toBe(201);
    expect(own.body).toMatchObject({ version: 1, hash: alpha.body.hash });
    expect((await read(`/v1/definitions/${OWN}`, "alpha")).body.version).toBe(2);
  });
});
