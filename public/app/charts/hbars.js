// Categories as horizontal bars with their value written at the end, on a linear or a log axis, with an
// optional vertical marker (a target the values are held against). Plain SVG, sized by its viewBox.
import { html } from "../html.js";
import { compact, linearScale, linearTicks, logScale, logTicks } from "./scale.js";

const WIDTH = 460;
const ROW = 30;
const MARGIN = { top: 20, right: 90, bottom: 28, left: 130 };

/**
 * `rows`: [{ key, label, value, text?, series? }] (text: how the value is written, default the number; series:
 * the colour class, default the key);
 * `log`: a log axis from 1; `tickValues`: round values to put ticks at instead of powers of ten (ascending);
 * `marker`: { at, label }; `formatTick` labels the axis.
 */
export function HBars({ rows, log = false, tickValues, marker, formatTick = compact, title, testId }) {
  const height = MARGIN.top + rows.length * ROW + MARGIN.bottom;
  const max = Math.max(...rows.map((row) => row.value), marker?.at ?? 0, 1);
  const ticks = log ? logTicks(max, tickValues) : linearTicks(max);
  const x = (log ? logScale : linearScale)(ticks.at(-1), MARGIN.left, WIDTH - MARGIN.right);
  const axisY = height - MARGIN.bottom;
  return html`
    <figure class="chart">
      <svg viewBox=${`0 0 ${WIDTH} ${height}`} role="img" aria-label=${title} data-testid=${testId}>
        ${ticks.map((tick) => html`
          <g key=${tick}>
            <line class="grid" x1=${x(tick)} x2=${x(tick)} y1=${MARGIN.top} y2=${axisY} />
            <text class="tick" x=${x(tick)} y=${axisY + 16} text-anchor="middle">${formatTick(tick)}</text>
          </g>`)}
        ${rows.map((row, i) => bar(row, MARGIN.top + i * ROW, x, log))}
        <line class="axis" x1=${MARGIN.left} x2=${MARGIN.left} y1=${MARGIN.top} y2=${axisY} />
        ${marker && html`
          <g class="marker">
            <line x1=${x(marker.at)} x2=${x(marker.at)} y1=${MARGIN.top - 6} y2=${axisY} />
            <text x=${x(marker.at)} y=${MARGIN.top - 9} text-anchor="middle">${marker.label}</text>
          </g>`}
      </svg>
    </figure>
  `;
}

/** On a log axis even the smallest value (1 ms, 0 ms) is an observation, so its bar stays visible. */
function bar(row, top, x, log) {
  const end = Math.max(x(row.value), MARGIN.left + (log ? 3 : 0));
  return html`
    <g key=${row.key}>
      <text class="label" x=${MARGIN.left - 8} y=${top + ROW / 2 + 4} text-anchor="end">${row.label}</text>
      <rect class=${`bar s-${row.series ?? row.key}`} data-series=${row.series ?? row.key} data-value=${row.value} x=${MARGIN.left} y=${top + 6} width=${end - MARGIN.left} height=${ROW - 12}>
        <title>${row.label}: ${row.text ?? row.value}</title>
      </rect>
      <text class="value" x=${end + 6} y=${top + ROW / 2 + 4}>${row.text ?? row.value}</text>
    </g>
  `;
}
