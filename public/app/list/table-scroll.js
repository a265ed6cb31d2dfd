// A table that may be wider than a phone's screen scrolls inside its own box, not the page. The box is a named
// region that takes the focus, so a keyboard can scroll it too.
import { html } from "../html.js";

export function TableScroll({ label, children }) {
  return html`<div class="table-scroll" role="region" aria-label=${label} tabindex="0">${children}</div>`;
}
