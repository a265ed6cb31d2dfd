import { beforeAll, describe, expect, it } from "vitest";
import { api, bearer } from "../helpers/api";
import { publishNew, read, versioned } from "../helpers/registry";

// Tenant "lister" holds only what this file publishes (storage is isolated per test file), so its list is exact.
const as = { headers: bearer("lister") };

const NAMES = ["billing", "invoice", "order", "payout", "refund", "shipping", "zeta"];

beforeAll(async () => {
  for (const name of NAMES) await publishNew(versioned(name, "v1"), 1, "lister");
  await publishNew(versioned("order", "v2"), 2, "lister");
  await publishNew(versioned("order", "v3"), 3, "lister");
  await publishNew(versioned("refund", "v2"), 2, "lister");
});

async function listAll(limit: number): Promise<{ pages: number; definitions: { name: string; version: number }[] }> {
  const definitions: { name: string; version: number }[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await api("GET", `/v1/definitions?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, undefined, as);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body.definitions.length).toBeLessThanOrEqual(limit);
    definitions.push(...page.body.definitions);
    cursor = page.body.nextCursor;
    pages += 1;
  } while (cursor);
  return { pages, definitions };
}

describe("GET /v1/definitions", () => {
  it("lists each name once, in name order, with its latest version", async () => {
    const response = await api("GET", "/v1/definitions", undefined, as);

    expect(response.status).toBe(200);
    expect(response.body.nextCursor).toBeUndefined();
    expect(response.body.definitions.map((d: { name: string; version: number }) => [d.name, d.version])).toEqual([
      ["billing", 1],
      ["invoice", 1],
      ["order", 3],
      ["payout", 1],
      ["refund", 2],
      ["shipping", 1],
      ["zeta", 1],
    ]);
    const order = response.body.definitions.find((d: { name: string }) => d.name === "order");
    const latest = await read("/v1/definitions/order", "lister");
    expect(order).toEqual({ name: "order", version: 3, hash: latest.body.hash, createdAt: latest.body.createdAt });
  });

  it.each([1, 2, 3, 7])("pages through every name exactly once, %i at a time", async (limit) => {
    const { pages, definitions } = await listAll(limit);

    expect(definitions.map((d) => d.name)).toEqual(NAMES);
    // A full last page says that nothing follows (the list reads one row more than it answers).
    expect(pages).toBe(Math.ceil(NAMES.length / limit));
  });

  it.each<[string, string]>([
    ["a cursor it did not return", "cursor=not-a-cursor!"],
    ["a cursor that decodes to no name", `cursor=${btoa("-bad name").replace(/=+$/, "")}`],
    ["a limit over 100", "limit=101"],
    ["a limit of 0", "limit=0"],
    ["an unknown parameter", "status=running"],
  ])("answers %s with 400 naming the parameter", async (_what, query) => {
    const response = await api("GET", `/v1/definitions?${query}`, undefined, as);

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
  });
});

describe("GET /v1/definitions/{name}", () => {
  it("answers the latest version with its content", async () => {
    const response = await read("/v1/definitions/order", "lister");

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ name: "order", version: 3, hash: expect.stringMatching(/^[0-9a-f]{64}$/), createdAt: expect.any(Number), definition: versioned("order", "v3") });
  });

  it("answers a name with no version with 404 naming it", async () => {
    const response = await read("/v1/definitions/nothing-here", "lister");

    expect(response.status).toBe(404);
    expect(response.body.error).toEqual({ code: "not_found", message: 'No definition "nothing-here".' });
  });
});

describe("GET /v1/definitions/{name}/versions", () => {
  it("lists every version of the name, newest first, each with its hash and when it was published, without its content", async () => {
    const response = await read("/v1/definitions/order/versions", "lister");

    expect(response.status).toBe(200);
    expect(response.body.nextCursor).toBeUndefined();
    expect(response.body.versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    for (const listed of response.body.versions) {
      const one = await read(`/v1/definitions/order/versions/${listed.version}`, "lister");
      expect(listed).toEqual({ name: "order", version: listed.version, hash: one.body.hash, createdAt: one.body.createdAt });
    }
  });

  it.each([1, 2, 3])("pages through the versions exactly once, %i at a time", async (limit) => {
    const versions: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await read(`/v1/definitions/order/versions?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, "lister");
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.body.versions.length).toBeLessThanOrEqual(limit);
      versions.push(...page.body.versions.map((v: { version: number }) => v.version));
      cursor = page.body.nextCursor;
    } while (cursor);

    expect(versions).toEqual([3, 2, 1]);
  });

  it("answers a name with no version with 404 naming it", async () => {
    const response = await read("/v1/definitions/nothing-here/versions", "lister");

    expect(response.status).toBe(404);
    expect(response.body.error).toEqual({ code: "not_found", message: 'No definition "nothing-here".' });
  });

  it.each<[string, string]>([
    ["a cursor it did not return", "cursor=not-a-cursor"],
    ["a limit over 100", "limit=101"],
    ["an unknown parameter", "after=2"],
  ])("answers %s with 400", async (_what, query) => {
    const response = await read(`/v1/definitions/order/versions?${query}`, "lister");

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
  });
});

describe("GET /v1/definitions/{name}/versions/{version}", () => {
  it.each([1, 2, 3])("answers version %i with the content that was published as it", async (version) => {
    const response = await read(`/v1/definitions/order/versions/${version}`, "lister");

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: "order", version, definition: versioned("order", `v${version}`) });
  });

  it("answers a version that does not exist with 404 naming the version and the name", async () => {
    const response = await read("/v1/definitions/order/versions/4", "lister");

    expect(response.status).toBe(404);
    expect(response.body.error).toEqual({ code: "not_found", message: 'No version 4 of definition "order".' });
  });

  it.each(["0", "01", "1e0", "-1", "one", "1.0", "9999999999"])("answers version %s, which is no version number, with 400 naming version", async (version) => {
    const response = await read(`/v1/definitions/order/versions/${version}`, "lister");

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ path: ["version"] }));
  });
});
