// The words on a step's box in the graph, broken into lines that fit its width: SVG text does not wrap by itself, and
// a line wider than the box is cut off at its edge. A step id breaks after its own separators ("notify-" /
// "customer") where it can, the status line between words; what still does not fit ends in "…", and the box's
// tooltip has it whole. Widths are measured in the box's own fonts (`measure(text)` in pixels), not guessed from
// a count of characters.

/** The fonts of a box's two kinds of line: the id, bold monospace; its status, the page's sans-serif, smaller. */
export const ID_FONT = '600 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
export const STATUS_FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

const MAX_ID_LINES = 3;
const MAX_STATUS_LINES = 2;

/** The id's lines, each at most `width` pixels: broken after a "-", "_", "." or ":" past the line's first third, else anywhere. */
export function idLines(id, width, measure) {
  return wrap(id, { width, measure, maxLines: MAX_ID_LINES, breakAt: (line) => Math.max(...[..."-_.:"].map((separator) => line.lastIndexOf(separator))) + 1 });
}

/** The status line's lines, broken between words. */
export function statusLines(text, width, measure) {
  return wrap(text, { width, measure, maxLines: MAX_STATUS_LINES, breakAt: (line, next) => (next === " " ? line.length : line.lastIndexOf(" ") + 1) }).map((line) => line.trim());
}

/** `breakAt(line, next)`: where to end a line that is full (a length; 0 for nowhere good), given the character after it. */
function wrap(text, { width, measure, maxLines, breakAt }) {
  const fits = (line) => measure(line) <= width;
  const lines = [];
  let rest = text;
  while (!fits(rest) && lines.length < maxLines - 1) {
    const full = longestFitting(rest, fits);
    const at = breakAt(rest.slice(0, full), rest[full]);
    const cut = at >= full / 3 ? at : full;
    lines.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^ +/, "");
  }
  if (fits(rest)) return [...lines, rest];
  return [...lines, `${rest.slice(0, longestFitting(rest, (line) => fits(`${line}…`)))}…`];
}

/** The length of the longest start of `text` that fits (one character at least, so a line always moves on). */
function longestFitting(text, fits) {
  let length = 1;
  while (length < text.length && fits(text.slice(0, length + 1))) length += 1;
  return length;
}
