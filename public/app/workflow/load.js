// Everything the workflow page shows, fetched together: the view, its diagnosis and the history (and the pools,
// when a step waits for a worker). The history is append-only, so each refresh asks only for the events after
// the last one it has.
import { api, query } from "../api.js";
import { poolsFor } from "./worker-pool.js";

/** Pages of history read in one refresh at most; a longer backlog is read over the following refreshes. */
const HISTORY_PAGES_PER_LOAD = 10;

/** A `load` for useLive that remembers the history between refreshes of one workflow. */
export function createWorkflowLoader(id) {
  const path = `/v1/workflows/${encodeURIComponent(id)}`;
  let events = [];
  return async function load() {
    const [view, diagnosis, newEvents] = await Promise.all([api(path), api(`${path}/diagnosis`), readHistoryAfter(path, events.at(-1)?.seq ?? 0)]);
    events = events.concat(newEvents);
    const pools = await poolsFor(diagnosis);
    return { view, diagnosis, events, pools, loadedAt: Math.max(Date.now(), view.updatedAt, events.at(-1)?.at ?? 0) };
  };
}

async function readHistoryAfter(path, after) {
  const found = [];
  let cursor = after;
  for (let page = 0; page < HISTORY_PAGES_PER_LOAD; page++) {
    const { events, nextAfter } = await api(`${path}/history${query({ after: cursor || undefined })}`);
    found.push(...events);
    if (nextAfter === undefined) break;
    cursor = nextAfter;
  }
  return found;
}
