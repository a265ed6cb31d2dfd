// The workflows list's state lives in the hash's search (status, search text, id prefix, created range, page size,
// cursor trail), so a reload or the back button shows the same page; this module reads it, writes it, and loads
// that page.
import { api, query } from "../api.js";
import { href } from "../router.js";
import { readTrail, trailParam } from "./paging.js";
import { ID_PATTERN, LIST_PAGE_MAX, WORKFLOW_STATUSES } from "../generated/contract.js";

export const PAGE_SIZES = [10, 25, 50, 100];
const DEFAULT_PAGE_SIZE = 25;

/**
 * `{ status, q, idPrefix, createdAfter, createdBefore, limit, trail }` from the route's search (the created range as
 * ISO 8601 text); what the API would refuse is dropped, but for a prefix no id can begin with, which the page says.
 */
export function readListQuery(search) {
  const status = search.get("status") ?? undefined;
  const limit = Number(search.get("limit"));
  return {
    status: WORKFLOW_STATUSES.includes(status) ? status : undefined,
    q: search.get("q")?.trim() || undefined,
    idPrefix: search.get("idPrefix")?.trim() || undefined,
    createdAfter: instant(search.get("createdAfter")),
    createdBefore: instant(search.get("createdBefore")),
    limit: Number.isInteger(limit) && limit >= 1 && limit <= LIST_PAGE_MAX ? limit : DEFAULT_PAGE_SIZE,
    trail: readTrail(search),
  };
}

/** ISO 8601 text that is a time, as it is; anything else, nothing. */
function instant(text) {
  return text && Number.isFinite(Date.parse(text)) ? new Date(Date.parse(text)).toISOString() : undefined;
}

/** Whether the list is narrowed by anything but its status: what an empty page should offer to clear. */
export function hasFilters(query) {
  return query.q !== undefined || query.idPrefix !== undefined || query.createdAfter !== undefined || query.createdBefore !== undefined;
}

/** The list's URL with `changes` applied; any change but paging goes back to the first page. */
export function listHref(current, changes) {
  const next = { ...current, trail: [], ...changes };
  return href("workflows", {
    status: next.status,
    q: next.q,
    idPrefix: next.idPrefix,
    createdAfter: next.createdAfter,
    createdBefore: next.createdBefore,
    limit: next.limit === DEFAULT_PAGE_SIZE ? undefined : next.limit,
    after: trailParam(next.trail),
  });
}

/**
 * One page of rows. The search text is an exact definition name to GET /v1/workflows, so a search also asks for the
 * workflow whose id is exactly the text (GET /v1/workflows/{id}) and shows it first on the first page, when the
 * list's other filters let it through.
 */
export async function loadWorkflowPage(current) {
  const { status, q, idPrefix, createdAfter, createdBefore, limit, trail } = current;
  if (q !== undefined && !ID_PATTERN.test(q)) return { rows: [], invalidSearch: true, loadedAt: Date.now() };
  if (idPrefix !== undefined && !ID_PATTERN.test(idPrefix)) return { rows: [], invalidPrefix: true, loadedAt: Date.now() };
  const cursor = trail.at(-1);
  const [page, byId, counts] = await Promise.all([
    api(`/v1/workflows${query({ status, name: q, idPrefix, createdAfter, createdBefore, limit, cursor })}`),
    q !== undefined && cursor === undefined ? workflowWithId(q) : undefined,
    countsByStatus(),
  ]);
  const rows = page.workflows.map((workflow) => ({ ...workflow, matchedBy: q === undefined ? undefined : "name" }));
  if (byId && passes(byId, current)) {
    // Listed by name too: its row from the list, which carries the line of why it is open.
    const index = rows.findIndex((row) => row.id === byId.id);
    const listed = index === -1 ? undefined : rows.splice(index, 1)[0];
    rows.unshift(listed ? { ...listed, matchedBy: "id" } : byId);
  }
  return { rows, nextCursor: page.nextCursor, counts, loadedAt: Date.now() };
}

/** Whether the workflow found by its id is one the list's filters (but the name) would show. */
function passes(row, { status, idPrefix, createdAfter, createdBefore }) {
  return (
    (status === undefined || row.status === status) &&
    (idPrefix === undefined || row.id.startsWith(idPrefix)) &&
    (createdAfter === undefined || row.createdAt >= Date.parse(createdAfter)) &&
    (createdBefore === undefined || row.createdAt < Date.parse(createdBefore))
  );
}

/** The workflow with that id, as a row: without the list's line of why it is open, which only the list has. */
async function workflowWithId(id) {
  try {
    const view = await api(`/v1/workflows/${encodeURIComponent(id)}`);
    const ended = view.endedAt === undefined ? {} : { endedAt: view.endedAt };
    return { id: view.id, name: view.name, status: view.status, createdAt: view.createdAt, updatedAt: view.endedAt ?? view.updatedAt, ...ended, matchedBy: "id" };
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
