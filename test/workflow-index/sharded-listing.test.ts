// GET /v1/workflows over two index shards: the route merges newest-first pages from both with one cursor. The
// entries are written straight to the shards they belong to (as each object's outbox would), so any creation
// times, ties included, can be laid out; every listing goes through the API.
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { IndexEntry } from "../../src/domain/machine/index-entry";
import type { WorkflowStatus } from "../../src/domain/machine/state";
import { upsertIndexEntry, type ListedWorkflow } from "../../src/workflow-index/d1-index";
import { indexDbFor, indexLayoutOf, indexShardOf } from "../../src/workflow-index/index-shards";
import { mergeShardPages } from "../../src/workflow-index/tenant-listing";
import { api, bearer, uniqueId } from "../helpers/api";
import { uniqueIdOnShard } from "../helpers/index-db";

const TENANT = "alpha";
const asAlpha = { headers: bearer(TENANT) };

type Listed = { id: string; name: string; status: string; createdAt: number; updatedAt: number };

async function write(id: string, name: string, createdAt: number, status: WorkflowStatus = "running"): Promise<void> {
  const entry: IndexEntry = { tenant: TENANT, id, name, status, createdAt, updatedAt: createdAt, version: 1 };
  await upsertIndexEntry(indexDbFor(env, TENANT, id), entry);
}

/** Every page of `query`, following nextCursor; bounded so a cursor loop fails instead of hanging. */
async function pagesOf(query: string, limit: number): Promise<Listed[][]> {
  const pages: Listed[][] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 500; n++) {
    const response = await api("GET", `/v1/workflows?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, undefined, asAlpha);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    pages.push(response.body.workflows);
    cursor = response.body.nextCursor;
    if (cursor === undefined) return pages;
  }
  throw new Error("cursor never ended");
}

const newestFirst = (a: { createdAt: number; id: string }, b: { createdAt: number; id: string }) =>
  b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

const shardOf = (id: string) => indexShardOf(TENANT, id, indexLayoutOf(env));

describe("GET /v1/workflows over two index shards", () => {
  it("interleaves both shards newest first, ties on the creation time broken by id, across page boundaries", async () => {
    const name = uniqueId("ties");
    // Three creation times, each shared by workflows on both shards.
    const ids = [0, 1, 0, 1, 1, 0, 0, 1, 1].map((shard) => uniqueIdOnShard(shard, TENANT, "tie"));
    const written = ids.map((id, n) => ({ id, createdAt: 1_000 + Math.floor(n / 3) }));
    for (const { id, createdAt } of written) await write(id, name, createdAt);

    for (const limit of [1, 2, 3, 4, 9, 10]) {
      const pages = await pagesOf(`name=${name}`, limit);
      expect(pages.flat().map((workflow) => workflow.id)).toEqual([...written].sort(newestFirst).map((workflow) => workflow.id));
      expect(pages).toHaveLength(Math.max(1, Math.ceil(ids.length / limit)));
      for (const page of pages) expect(page.length).toBeLessThanOrEqual(limit);
    }
  });

  it("pages never skip or repeat a workflow, whatever the creation times, page size and filter (concatenated pages are the full list)", async () => {
    const statuses: WorkflowStatus[] = ["running", "completed", "failed"];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ createdAt: fc.integer({ min: 1, max: 12 }), status: fc.constantFrom(...statuses) }), { maxLength: 24 }),
        fc.integer({ min: 1, max: 8 }),
        fc.option(fc.constantFrom(...statuses), { nil: undefined }),
        async (workflows, limit, status) => {
          const name = uniqueId("prop");
          const written = workflows.map((workflow) => ({ ...workflow, id: uniqueId("p") }));
          await Promise.all(written.map((workflow) => write(workflow.id, name, workflow.createdAt, workflow.status)));

          const pages = await pagesOf(`name=${name}${status ? `&status=${status}` : ""}`, limit);

          const expected = written.filter((workflow) => status === undefined || workflow.status === status).sort(newestFirst);
          expect(pages.flat().map((workflow) => workflow.id)).toEqual(expected.map((workflow) => workflow.id));
          expect(pages.slice(0, -1).every((page) => page.length === limit)).toBe(true);
          expect(pages.flat().every((workflow) => workflow.name === name && (status === undefined || workflow.status === status))).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("narrows by id prefix and created range on both shards, pages never skipping or repeating a workflow", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ createdAt: fc.integer({ min: 1, max: 12 }), prefix: fc.constantFrom("a", "ab", "b") }), { maxLength: 24 }),
        fc.integer({ min: 1, max: 8 }),
        fc.record({ prefix: fc.option(fc.constantFrom("a", "ab", "b", "c"), { nil: undefined }), after: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }), span: fc.integer({ min: 1, max: 12 }) }),
        async (workflows, limit, filter) => {
          const family = uniqueId("range");
          const written = workflows.map((workflow, n) => ({ ...workflow, id: `${family}-${workflow.prefix}-${n}` }));
          await Promise.all(written.map((workflow) => write(workflow.id, family, workflow.createdAt)));
          const prefix = `${family}-${filter.prefix ?? ""}`;
          const before = filter.after === undefined ? undefined : filter.after + filter.span;
          const range = `${filter.after === undefined ? "" : `&createdAfter=${filter.after}&createdBefore=${before}`}`;

          const pages = await pagesOf(`idPrefix=${prefix}${range}`, limit);

          const expected = written
            .filter((workflow) => workflow.id.startsWith(prefix) && (filter.after === undefined || (workflow.createdAt >= filter.after && workflow.createdAt < before!)))
            .sort(newestFirst);
          expect(pages.flat().map((workflow) => workflow.id)).toEqual(expected.map((workflow) => workflow.id));
          expect(pages.slice(0, -1).every((page) => page.length === limit)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("lists workflows from both shards in one page", async () => {
    const name = uniqueId("both");
    const ids = [uniqueIdOnShard(0, TENANT), uniqueIdOnShard(1, TENANT)];
    for (const id of ids) await write(id, name, 5_000);
    const [page] = await pagesOf(`name=${name}`, 10);
    expect(page!.map((workflow) => shardOf(workflow.id)).sort()).toEqual([0, 1]);
  });

  it("answers 400 validation_failed for a cursor it did not hand out", async () => {
    for (const cursor of ["not-a-cursor", "e30", btoa('[1,""]').replace(/=+$/, "")]) {
      const response = await api("GET", `/v1/workflows?cursor=${cursor}`, undefined, asAlpha);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("validation_failed");
      expect(response.body.error.details.map((detail: { path: unknown[] }) => detail.path)).toContainEqual(["cursor"]);
    }
  });
});

describe("mergeShardPages", () => {
  const row = (id: string, createdAt: number): ListedWorkflow => ({ id, name: "n", status: "running", createdAt, updatedAt: createdAt });

  it("takes the newest `limit` rows of all shards and points the cursor at the last one taken", () => {
    const page = mergeShardPages([[row("b", 9), row("a", 5), row("c", 1)], [row("z", 5), row("y", 2)]], 3);
    expect(page.workflows.map((workflow) => workflow.id)).toEqual(["b", "z", "a"]);
    expect(page.next).toEqual({ createdAt: 5, id: "a" });
  });

  it("leaves the cursor out when no shard has a row beyond the page", () => {
    expect(mergeShardPages([[row("a", 2)], [row("b", 1)], []], 2)).toEqual({ workflows: [row("a", 2), row("b", 1)] });
    expect(mergeShardPages([[], []], 5)).toEqual({ workflows: [] });
  });
});
