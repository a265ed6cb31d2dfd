// When a version was published: the clock time, and how long ago under it; the exact instant on hover.
import { clock } from "../format.js";
import { html } from "../html.js";
import { relative } from "../list/relative-time.js";

export function Published({ at, now }) {
  return html`<span title=${new Date(at).toISOString()}>${clock(at)}</span> <span class="muted">${relative(Math.min(at, now), now)}</span>`;
}
