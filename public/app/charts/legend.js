// A chart's key: a colour swatch per series, in the order the series are drawn.
import { html } from "../html.js";

export function Legend({ series }) {
  return html`
    <ul class="legend">
      ${series.map((one) => html`<li key=${one.key}><span class=${`swatch s-${one.key}`}></span>${one.label}</li>`)}
    </ul>
  `;
}
