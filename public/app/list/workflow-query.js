// The workflows list's state lives in the hash's search (status, search text, page size, cursor trail), so a
// reload or the back button shows the same page; this module reads it, writes it, and loads that page.
import { api, query } from "../api.js";
import { href } from "../router.js";
import { readTrail, trailParam } from "./paging.js";
import { ID_PATTERN, LIST_PAGE_MAX, WORKFLOW_STATUSES } from "../generated/contract.js";

export const PAGE_SIZES = [10, 25, 50, 100];
const DEFAULT_PAGE_SIZE = 25;

/** `{ status, q, limit, trail }` from the route's search; what the API would refuse is dropped. */
export function readListQuery(search) {
  const status = search.get("status") ?? undefined;
  const limit = Number(search.get("limit"));
  return {
    status: WORKFLOW_STATUSES.includes(status) ? status : undefined,
    q: search.get("q")?.trim() || undefined,
    limit: Number.isInteger(limit) && limit >= 1 && limit <= LIST_PAGE_MAX ? limit : DEFAULT_PAGE_SIZE,
    trail: readTrail(search),
  };
}

/** The list's URL with `changes` applied; any change but paging goes back to the first page. */
export function listHref(current, changes) {
  const next = { ...current, trail: [], ...changes };
  return href("workflows", {
    status: next.status,
    q: next.q,
    limit: next.limit === DEFAULT_PAGE_SIZE ? undefined : next.limit,
    after: trailParam(next.trail),
  });
}

/**
 * One page of rows. GET /v1/workflows filters by exact definition name only, so a search also asks for the
 * workflow whose id is exactly the text (GET /v1/workflows/{id}) and shows it first on the first page.
 */
export async function loadWorkflowPage({ status, q, limit, trail }) {
  if (q !== undefined && !ID_PATTERN.test(q)) return { rows: [], invalidSearch: true, loadedAt: Date.now() };
  const cursor = trail.at(-1);
  const [page, byId, counts] = await Promise.all([
    api(`/v1/workflows${query({ status, name: q, limit, cursor })}`),
    q !== undefined && cursor === undefined ? workflowWithId(q) : undefined,
    countsByStatus(),
  ]);
  const rows = page.workflows.map((workflow) => ({ ...workflow, matchedBy: q === undefined ? undefined : "name" }));
  if (byId && (status === undefined || byId.status === status)) {
    const index = rows.findIndex((row) => row.id === byId.id);
    if (index !== -1) rows.splice(index, 1);
    rows.unshift(byId);
  }
  return { rows, nextCursor: page.nextCursor, counts, loadedAt: Date.now() };
}

async function workflowWithId(id) {
  try {
    const view = await api(`/v1/workflows/${encodeURIComponent(id)}`);
    return { id: view.id, name: view.name, status: view.status, createdAt: view.createdAt, updatedAt: view.endedAt ?? view.updatedAt, matchedBy: "id" };
  } catch (error) {
    if (error.status === 404) return undefined;
    throw error;
  }
}

/** The tenant's workflows per status (GET /v1/metrics), for the filter's counts; the list works without it. */
async function countsByStatus() {
  try {
    return (await api("/v1/metrics")).workflows.byStatus;
  } catch {
    return undefined;
  }
}
