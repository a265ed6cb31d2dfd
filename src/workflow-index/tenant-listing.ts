/**
 * GET /v1/workflows over a sharded index. Every shard sorts by the same key, (createdAt, id) newest first, and the
 * cursor is a position on that key, not on any one shard: each shard resumes just past it, so the merged pages
 * neither skip nor repeat a workflow, whichever shards the rows came from.
 */
import { listShardWorkflows, type ListedWorkflow, type ListPosition, type ListQuery } from "./d1-index";

export interface WorkflowPage {
  workflows: ListedWorkflow[];
  next?: ListPosition;
}

/** Newest first; ids are ASCII (IdSchema), so this order is SQLite's `created_at DESC, id DESC`. */
function newestFirst(a: ListedWorkflow, b: ListedWorkflow): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * Merges the shards' rows (each newest first, up to `limit + 1` past the cursor) into one page. The page's first
 * `limit` rows of the merge are the tenant's next `limit` in the total order, since no shard held back a row that
 * belongs before its own last one; one more row anywhere means another page follows.
 */
export function mergeShardPages(pages: ListedWorkflow[][], limit: number): WorkflowPage {
  const merged = pages.flat().sort(newestFirst);
  const workflows = merged.slice(0, limit);
  const last = workflows.at(-1);
  return merged.length > limit && last ? { workflows, next: { createdAt: last.createdAt, id: last.id } } : { workflows };
}

/** One page of a tenant's workflows from its shards' databases, read side by side. */
export async function listTenantWorkflows(dbs: D1Database[], tenant: string, query: ListQuery): Promise<WorkflowPage> {
  const pages = await Promise.all(dbs.map((db) => listShardWorkflows(db, tenant, query)));
  return mergeShardPages(pages, query.limit);
}
