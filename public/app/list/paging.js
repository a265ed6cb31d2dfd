// Cursor paging that survives a reload and the back button. The API only hands out the next page's cursor,
// so the cursors of every page before this one ride in the hash's search ("after=c1~c2"): "Previous" drops
// the last, "Next" appends the API's nextCursor, and the page number is the trail's length plus one.
import { html } from "../html.js";

/** In neither alphabet the cursors come in: base64url (workflows) and ids (schedules, which use "." and ":"). */
const SEPARATOR = "~";

export function readTrail(search) {
  const text = search.get("after");
  return text ? text.split(SEPARATOR).filter(Boolean) : [];
}

/** The trail as the hash's "after" value; undefined on the first page, so its URL stays clean. */
export function trailParam(trail) {
  return trail.length > 0 ? trail.join(SEPARATOR) : undefined;
}

/** Previous / page N / Next; `linkTo(trail)` is the href of the page that trail leads to. */
export function Pager({ trail, nextCursor, linkTo, label = "Pages" }) {
  if (trail.length === 0 && !nextCursor) return null;
  const previous = trail.length > 0 ? linkTo(trail.slice(0, -1)) : undefined;
  const next = nextCursor ? linkTo([...trail, nextCursor]) : undefined;
  return html`
    <nav class="pager" aria-label=${label}>
      ${pageLink(previous, "← Previous", "previous")}
      <span class="muted" data-testid="page-number">Page ${trail.length + 1}</span>
      ${pageLink(next, "Next →", "next")}
    </nav>
  `;
}

function pageLink(to, text, rel) {
  return to ? html`<a href=${to} rel=${rel}>${text}</a>` : html`<span class="disabled" aria-disabled="true">${text}</span>`;
}
