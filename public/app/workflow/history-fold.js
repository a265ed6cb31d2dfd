// A map's items write the history's bulk: four or more events each (`thumbs#17` scheduled, started, succeeded…),
// 40 000 lines for a map of 10 000. The history list shows the map's own events and folds its items' into one
// line per map: how many items, and how each one's latest event left it.
import { count, itemCountWords } from "./map-progress.js";

/** The map step and item index of an item's step id ("thumbs#17"), or undefined for any other step. */
export function mapItemOf(stepId) {
  const match = /^(.+)#(\d+)$/.exec(stepId ?? "");
  return match ? { map: match[1], index: Number(match[2]) } : undefined;
}

/** Where an item stands after one of its events; events not listed leave it where it was. */
const ITEM_STATUS_AFTER = {
  step_scheduled: () => "running",
  step_started: () => "running",
  step_retry_scheduled: () => "running",
  step_succeeded: () => "succeeded",
  step_failed: (data) => (data?.final === false ? "running" : "failed"),
  step_skipped: () => "skipped",
  step_compensated: () => "compensated",
};

/** The order an item's statuses are told in, after the map's own bar's. */
const TOLD_ORDER = ["succeeded", "failed", "skipped", "compensated", "running", "pending"];

/**
 * `{ events, maps }`: the events that are not an item's, in order, and per map step that has item events
 * `{ stepId, total, events, counts }` (counts by status; `total` from its latest `map_started`, else the items seen).
 */
export function foldItemEvents(events) {
  const shown = [];
  const maps = new Map();
  const mapOf = (stepId) => maps.get(stepId) ?? maps.set(stepId, { stepId, total: undefined, events: 0, items: new Map() }).get(stepId);
  for (const event of events) {
    const item = mapItemOf(event.stepId);
    if (!item) {
      if (event.type === "map_started") mapOf(event.stepId).total = event.data?.total;
      shown.push(event);
      continue;
    }
    const map = mapOf(item.map);
    map.events += 1;
    const after = ITEM_STATUS_AFTER[event.type];
    map.items.set(item.index, after ? after(event.data) : (map.items.get(item.index) ?? "running"));
  }
  return { events: shown, maps: [...maps.values()].filter((map) => map.events > 0).map(summaryOf) };
}

function summaryOf({ stepId, total, events, items }) {
  const counts = {};
  for (const status of items.values()) counts[status] = (counts[status] ?? 0) + 1;
  const known = total ?? items.size;
  counts.pending = Math.max(0, known - items.size);
  return { stepId, total: known, events, counts };
}

/** "thumbs: 1 000 items — 998 succeeded, 2 failed". */
export function foldWords({ stepId, total, counts }) {
  return `${stepId}: ${count(total)} item${total === 1 ? "" : "s"} — ${itemCountWords(counts, TOLD_ORDER)}`;
}
