// How far a bulk job got: a bar out of the workflows it matched (done, failed, still to do) and the same in words.
// While the job reads the index its `matched` still grows, and the bar says so.
import { html } from "../html.js";
import { count } from "../workflow/map-progress.js";

export function BulkProgress({ job }) {
  const { matched, done, failed } = job;
  const left = Math.max(0, matched - done - failed);
  const share = (n) => `${matched === 0 ? 0 : (n / matched) * 100}%`;
  const words = `${count(done)} / ${count(matched)} done${failed > 0 ? ` · ${count(failed)} failed` : ""}`;
  return html`
    <div class="bulk-progress" data-testid="bulk-progress" data-matched=${matched} data-done=${done} data-failed=${failed} data-status=${job.status}>
      <div class="map-bar" role="img" aria-label=${`${words}${left > 0 ? `, ${count(left)} to go` : ""}`}>
        ${done > 0 && html`<span class="map-segment status completed" style=${{ width: share(done) }} title=${`${count(done)} done`}></span>`}
        ${failed > 0 && html`<span class="map-segment status failed" style=${{ width: share(failed) }} title=${`${count(failed)} failed`}></span>`}
      </div>
      <span class="bulk-words">${words}${job.status === "running" && matched === 0 ? html` <span class="muted">(finding the matching workflows…)</span>` : ""}</span>
    </div>
  `;
}
