// How far a map step got, from the counts its view carries (`items: {total, pending, running, succeeded, failed,
// skipped}`): a bar out of the total and the same counts in words. The items themselves are paged apart.
import { html } from "../html.js";

/** The bar's segments, left to right: what ended first, then what runs, then what has not started. */
const SEGMENTS = ["succeeded", "failed", "skipped", "running", "pending"];

/** The counts told after "58 / 60 succeeded". */
const OTHERS = SEGMENTS.filter((status) => status !== "succeeded");

/** "1 000". */
export function count(n) {
  return n.toLocaleString("en-US").replaceAll(",", " ");
}

/** "998 succeeded, 2 failed": the non-zero counts in the bar's order; "none yet" when all are zero. */
export function itemCountWords(counts, order = SEGMENTS) {
  const words = order.filter((status) => counts[status] > 0).map((status) => `${count(counts[status])} ${status}`);
  return words.length > 0 ? words.join(", ") : "none yet";
}

export function MapProgress({ stepId, items }) {
  if (!items) return html`<p class="muted">The items are not known yet: the map has not started.</p>`;
  const { total } = items;
  return html`
    <div class="map-progress" data-testid=${`map-progress-${stepId}`} data-total=${total} data-succeeded=${items.succeeded} data-failed=${items.failed}>
      <div class="map-bar" role="img" aria-label=${`${stepId}: ${itemCountWords(items)} of ${count(total)} items`}>
        ${SEGMENTS.filter((status) => items[status] > 0).map(
          (status) => html`<span class=${`map-segment status ${status}`} style=${{ width: `${(items[status] / total) * 100}%` }} title=${`${count(items[status])} ${status}`}></span>`,
        )}
      </div>
      <p class="map-counts"><strong>${count(items.succeeded)} / ${count(total)}</strong> succeeded${total === 0 ? " (no items: the map succeeded at once)" : ""}
        ${items.succeeded < total && html`<span class="muted"> · ${itemCountWords(items, OTHERS)}</span>`}</p>
    </div>
  `;
}
