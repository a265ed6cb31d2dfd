// A time series as stacked bars: one bar per bucket, one coloured segment per series, a count axis on the
// left and bucket times below. Plain SVG, sized by its viewBox so it scales with its panel.
import { html } from "../html.js";
import { Legend } from "./legend.js";
import { compact, linearScale, linearTicks } from "./scale.js";

const WIDTH = 1040;
const HEIGHT = 240;
const MARGIN = { top: 12, right: 12, bottom: 30, left: 46 };
/** Time labels under at most this many bars, so they never overlap. */
const X_LABELS = 12;

/**
 * `buckets`: [{ start, end, values: { [seriesKey]: count } }]; `series`: [{ key, label }] bottom to top;
 * `formatX(start)` labels a bucket; `yLabel` names what is counted; `formatY` writes the axis' ticks and `formatValue` a
 * segment's value when hovered (counts by default).
 */
export function StackedBars({ buckets, series, formatX, yLabel, formatY = compact, formatValue = String, title, testId }) {
  const totals = buckets.map((bucket) => series.reduce((sum, one) => sum + (bucket.values[one.key] ?? 0), 0));
  const ticks = linearTicks(Math.max(...totals, 0));
  const y = linearScale(ticks.at(-1), HEIGHT - MARGIN.bottom, MARGIN.top);
  const slot = (WIDTH - MARGIN.left - MARGIN.right) / buckets.length;
  const every = Math.ceil(buckets.length / X_LABELS);
  return html`
    <figure class="chart">
      <svg viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${title} data-testid=${testId}>
        <${YAxis} ticks=${ticks} y=${y} label=${yLabel} format=${formatY} />
        ${buckets.map((bucket, i) => html`
          <g key=${bucket.start} transform=${`translate(${MARGIN.left + i * slot},0)`}>
            ${segments(bucket, series, y, slot, formatX, formatValue)}
            ${i % every === 0 && html`<text class="tick" x=${slot / 2} y=${HEIGHT - MARGIN.bottom + 16} text-anchor="middle">${formatX(bucket.start)}</text>`}
          </g>`)}
        <line class="axis" x1=${MARGIN.left} x2=${WIDTH - MARGIN.right} y1=${y(0)} y2=${y(0)} />
      </svg>
      <${Legend} series=${series} />
    </figure>
  `;
}

function YAxis({ ticks, y, label, format }) {
  return html`
    ${ticks.map((tick) => html`
      <g key=${tick}>
        <line class="grid" x1=${MARGIN.left} x2=${WIDTH - MARGIN.right} y1=${y(tick)} y2=${y(tick)} />
        <text class="tick" x=${MARGIN.left - 6} y=${y(tick) + 4} text-anchor="end">${format(tick)}</text>
      </g>`)}
    <text class="axis-label" transform=${`translate(12,${(HEIGHT - MARGIN.bottom + MARGIN.top) / 2}) rotate(-90)`} text-anchor="middle">${label}</text>
  `;
}

/** The bucket's series stacked bottom-up; each segment says what it counts when hovered. */
function segments(bucket, series, y, slot, formatX, formatValue) {
  const width = Math.max(slot * 0.7, 1);
  let base = 0;
  return series.map((one) => {
    const value = bucket.values[one.key] ?? 0;
    if (value === 0) return null;
    const top = base + value;
    const rect = html`
      <rect class=${`bar s-${one.key}`} data-series=${one.key} data-value=${value} x=${(slot - width) / 2} width=${width} y=${y(top)} height=${y(base) - y(top)}>
        <title>${formatX(bucket.start)}: ${formatValue(value)} ${one.label}</title>
      </rect>`;
    base = top;
    return rect;
  });
}
