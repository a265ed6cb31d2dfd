// Axis arithmetic for the hand-drawn charts: round tick values and the maps from a value to a pixel.

/** The smallest 1, 2 or 5 × 10^k at or above `value` (at least 1: counts and milliseconds are whole). */
export function niceCeil(value) {
  if (!(value > 1)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 5, 10].find((m) => m * power >= value);
  return step * power;
}

/** About `count` evenly spaced round ticks from 0 up to at least `max`. */
export function linearTicks(max, count = 4) {
  const step = niceCeil(Math.max(max, 1) / count);
  const ticks = [];
  for (let tick = 0; ticks.length === 0 || ticks.at(-1) < max; tick += step) ticks.push(tick);
  if (ticks.length === 1) ticks.push(step);
  return ticks;
}

/**
 * Ticks for a log axis from 1 up to at least `max`: `candidates` (ascending, e.g. round durations) while they
 * last, then powers of ten.
 */
export function logTicks(max, candidates = []) {
  const ticks = [1];
  for (const candidate of candidates) {
    if (ticks.at(-1) >= max) break;
    if (candidate > ticks.at(-1)) ticks.push(candidate);
  }
  while (ticks.at(-1) < max) ticks.push(ticks.at(-1) * 10);
  if (ticks.length === 1) ticks.push(10);
  return ticks;
}

/** value → pixel between `from` and `to`, for a domain [0, top]. */
export function linearScale(top, from, to) {
  return (value) => from + ((to - from) * Math.min(Math.max(value, 0), top)) / top;
}

/** value → pixel for a domain [1, top] on a log scale; values below 1 sit at the axis. */
export function logScale(top, from, to) {
  const span = Math.log10(top);
  return (value) => from + ((to - from) * Math.min(Math.max(Math.log10(Math.max(value, 1)), 0), span)) / span;
}

/** 1200 → "1.2k": tick labels stay short. */
export function compact(value) {
  return value >= 1_000_000 ? `${trim(value / 1_000_000)}M` : value >= 1_000 ? `${trim(value / 1_000)}k` : String(value);
}

const trim = (value) => (Number.isInteger(value) ? String(value) : value.toFixed(1));
