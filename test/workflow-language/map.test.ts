import { afterEach, describe, expect, it, vi } from "vitest";
import { api, getWorkflow, historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { publishNew } from "../helpers/registry";
import { FAST } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { restartObject, stepOf } from "../helpers/workflow-language";
import { env } from "cloudflare:workers";

afterEach(() => vi.restoreAllMocks());

/** A map over `input.items` whose item posts `{ n: index, item }` to the remote's /thumb. */
function mapDefinition(name: string, map: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    name,
    defaults: FAST,
    steps: [{ id: "thumbs", map: { items: "{{ input.items }}", maxConcurrency: 50, step: { action: { type: "http", url: `${REMOTE}/thumb`, method: "POST", body: { n: "{{ index }}", item: "{{ item }}" } } }, ...map } }],
    ...extra,
  };
}

const items = (n: number) => Array.from({ length: n }, (_, i) => `img-${i}`);

async function allItems(id: string, query = ""): Promise<{ index: number; status: string; attempt: number; output?: unknown }[]> {
  const found: { index: number; status: string; attempt: number; output?: unknown }[] = [];
  let cursor: string | undefined;
  do {
    const page = await api("GET", `/v1/workflows/${id}/steps/thumbs/items?limit=1000${query}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(page.status).toBe(200);
    found.push(...page.body.items);
    cursor = page.body.nextCursor;
  } while (cursor);
  return found;
}

describe("a map step through the real queue and objects", () => {
  it("maps 1 000 items: one request per item key, the output in item order, an answer well under 128 KiB", async () => {
    const remote = mockRemote((call) => json({ thumb: `t-${call.body.n}` }));
    const { id } = await start(mapDefinition("thumbnails"), { input: { items: items(1000) } });
    const done = await waitForStatus(id, "completed", 60_000);

    const thumbs = stepOf(done, "thumbs") as { items?: unknown; output?: unknown };
    expect(thumbs.items).toEqual({ total: 1000, pending: 0, running: 0, succeeded: 1000, failed: 0, skipped: 0 });
    const raw = await api("GET", `/v1/workflows/${id}`);
    expect(JSON.stringify(raw.body).length).toBeLessThan(128 * 1024);
    expect(done.steps.map((step: { id: string }) => step.id)).toEqual(["thumbs"]);
    // Each item once, under its own key, with its own item and index.
    for (let i = 0; i < 1000; i += 97) expect(remote.requestsFor(`${id}:thumbs:${i}`)).toBe(1);
    expect(remote.calls).toHaveLength(1000);
    expect(remote.calls.find((call) => call.headers["idempotency-key"] === `${id}:thumbs:7`)?.body).toEqual({ n: 7, item: "img-7" });
    const paged = await allItems(id);
    expect(paged.map((item) => item.index)).toEqual(items(1000).map((_, i) => i));
    expect(paged[999]).toEqual({ index: 999, status: "succeeded", attempt: 1, output: { thumb: "t-999" } });
    expect((await historyOf(id)).find((event) => event.type === "map_started")).toMatchObject({ stepId: "thumbs", data: { total: 1000, maxConcurrency: 50 } });
  }, 90_000);

  it("gives the items' outputs in item order to the next step, and retries an item that failed once", async () => {
    const remote = mockRemote((call, n) => {
      if (new URL(call.url).pathname === "/after") return json({ got: call.body });
      return call.body.n === 2 && n === 1 ? json({ error: "busy" }, 503) : json({ n: call.body.n });
    });
    const definition = mapDefinition("then-after", { maxConcurrency: 2 });
    definition.steps.push({ id: "after", action: { type: "http", url: `${REMOTE}/after`, method: "POST", body: "{{ steps.thumbs.output }}" } } as never);
    const { id } = await start(definition, { input: { items: items(5) } });
    const done = await waitForStatus(id, "completed");
    expect(stepOf(done, "thumbs").output).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    expect(remote.requestsFor(`${id}:thumbs:2`)).toBe(2);
    expect(remote.callsTo("/after")[0]?.body).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    expect((await allItems(id, "&status=succeeded")).find((item) => item.index === 2)?.attempt).toBe(2);
  });

  it("fails beyond its tolerance and lists the failed items by status; a redrive runs only those again", async () => {
    let broken = true;
    const remote = mockRemote((call) => (broken && call.body.n % 4 === 1 ? json({ error: "bad image" }, 422) : json({ n: call.body.n })));
    const { id } = await start(mapDefinition("tolerant", { maxConcurrency: 4, toleratedFailures: 1 }, { onFailure: "fail" }), { input: { items: items(8) } });
    const failed = await waitForStatus(id, "failed");
    expect(stepOf(failed, "thumbs").error?.message).toMatch(/^2 of 8 items failed for good/);
    const failedItems = await allItems(id, "&status=failed");
    expect(failedItems.map((item) => item.index)).toEqual([1, 5]);
    broken = false;
    expect((await api("POST", `/v1/workflows/${id}/redrive`, {})).status).toBe(202);
    const done = await waitForStatus(id, "completed");
    expect(stepOf(done, "thumbs").output).toEqual(items(8).map((_, n) => ({ n })));
    expect(remote.requestsFor(`${id}:thumbs:0`)).toBe(1);
    expect(remote.requestsFor(`${id}:thumbs:1`)).toBe(2);
  });

  it("survives its object restarting between item reports: its progress is read back, each item done once", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const remote = mockRemote(async (call) => {
      if (call.body.n >= 10) await gate;
      return json({ n: call.body.n });
    });
    const { id } = await start(mapDefinition("restarted", { maxConcurrency: 5 }), { input: { items: items(40) } });
    const countsOf = async () => (stepOf(await getWorkflow(id), "thumbs") as { items?: { succeeded: number; running: number } }).items;
    await vi.waitFor(async () => expect(await countsOf()).toMatchObject({ succeeded: 10, running: 5 }), { timeout: 10_000, interval: 10 });
    await restartObject(id);
    // Read back from storage by a fresh instance: the map still knows how far it got.
    expect(await countsOf()).toMatchObject({ total: 40, succeeded: 10, running: 5 });
    release();
    const done = await waitForStatus(id, "completed", 30_000);
    expect((stepOf(done, "thumbs").output as { n: number }[]).map((output) => output.n)).toEqual(items(40).map((_, n) => n));
    for (let i = 0; i < 40; i++) expect(remote.successesFor(`${id}:thumbs:${i}`), `item ${i}`).toBe(1);
  });

  it("answers 404 for a step that is not a map, and 400 for a bad status", async () => {
    mockRemote(() => json({}));
    const { id } = await start(mapDefinition("lookup"), { input: { items: items(2) } });
    expect((await api("GET", `/v1/workflows/${id}/steps/nothing/items`)).status).toBe(404);
    expect((await api("GET", `/v1/workflows/${id}/steps/thumbs/items?status=bogus`)).status).toBe(400);
    expect((await api("GET", `/v1/workflows/no-such-workflow/steps/thumbs/items`)).status).toBe(404);
  });
});

describe("a map of child workflows through the real objects", () => {
  it("starts one child per item, <parentId>:<stepId>:<index>, each listed under its parent, and gathers their outputs in item order", async () => {
    mockRemote((call) => json({ label: call.body.n }));
    const name = uniqueId("label-one");
    await publishNew({ name, defaults: FAST, steps: [{ id: "label", action: { type: "http", url: `${REMOTE}/label`, body: { n: "{{ input.n }}" } } }] }, 1);
    const { id } = await start(
      { name: "labels", defaults: FAST, steps: [{ id: "each", map: { items: "{{ input.items }}", maxConcurrency: 3, step: { workflow: { definitionRef: { name }, input: { n: "{{ index }}" } } } } }] },
      { input: { items: items(8) } },
    );
    const done = await waitForStatus(id, "completed", 30_000);
    expect(stepOf(done, "each").output).toEqual(items(8).map((_, n) => ({ label: { label: n } })));
    expect(await getWorkflow(`${id}:each:5`)).toMatchObject({ status: "completed", input: { n: 5 }, parent: { id, stepId: "each#5" } });
    await vi.waitFor(async () => {
      const listed = await api("GET", `/v1/workflows?parentId=${id}&limit=100`);
      expect(listed.body.workflows.map((workflow: { id: string }) => workflow.id).sort()).toEqual(items(8).map((_, n) => `${id}:each:${n}`).sort());
    });
  });
});

describe("a deployment's map item limit (MAP_MAX_ITEMS)", () => {
  it("refuses, when its items are known, a map over more items than the deployment allows, with a clear error", async () => {
    mockRemote((call) => json({ n: call.body.n }));
    const settings = env as unknown as { MAP_MAX_ITEMS?: string };
    settings.MAP_MAX_ITEMS = "3";
    try {
      const { id } = await start(mapDefinition("limited", {}, { onFailure: "fail" }), { input: { items: items(4) } });
      const failed = await waitForStatus(id, "failed");
      expect(stepOf(failed, "thumbs").error?.message).toBe("map.items has 4 items; a map takes at most 3 (MAP_MAX_ITEMS)");
      const within = await start(mapDefinition("limited"), { input: { items: items(3) } });
      expect((await waitForStatus(within.id, "completed")).status).toBe("completed");
    } finally {
      delete settings.MAP_MAX_ITEMS;
    }
  });
});
