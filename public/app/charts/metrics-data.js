// What the metrics page draws: the tenant's totals (GET /v1/metrics) and, for the outcome series, the
// newest workflows from the list (GET /v1/workflows), since the metrics carry no time series.
import { api, query } from "../api.js";
import { bucketOutcomes } from "./outcome-series.js";

const LIST_PAGE = 100;
/** At most this many workflows are read per refresh; the chart says when it hit the cap. */
const MAX_LISTED = 1_000;

export async function loadMetrics(span) {
  const now = Date.now();
  // Newest first by start: reading back two windows catches those that started a while before they ended.
  const since = now - 2 * span.spanMs;
  const [figures, listed] = await Promise.all([api("/v1/metrics"), workflowsStartedSince(since)]);
  return { figures, outcomes: bucketOutcomes(listed.workflows, span, now), listed: { ...listed, since }, loadedAt: now };
}

async function workflowsStartedSince(since) {
  const workflows = [];
  let cursor;
  do {
    const page = await api(`/v1/workflows${query({ limit: LIST_PAGE, cursor })}`);
    workflows.push(...page.workflows);
    cursor = page.nextCursor;
    if ((page.workflows.at(-1)?.createdAt ?? 0) < since) return { workflows, capped: false };
  } while (cursor && workflows.length < MAX_LISTED);
  return { workflows, capped: Boolean(cursor) };
}
