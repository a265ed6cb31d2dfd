// Where each step of the graph goes: longest-path layering left to right (a step sits one column right of its
// furthest dependency), then within a column in the order of the dependencies' rows, so edges cross little.

/** A box's size for one line of id and one of status; each further line of either adds `line`. */
export const NODE = { width: 156, height: 46, line: 16, columnGap: 56, rowGap: 18, margin: 8 };

/** The height of every box of a graph whose fullest box has this many lines. */
export function nodeHeight(lines) {
  return NODE.height + NODE.line * Math.max(0, lines - 2);
}

/** Column of each step: 0 without dependencies, else one more than its furthest dependency. */
export function longestPathLayers(steps) {
  const byId = new Map(steps.map((step) => [step.id, step]));
  const layer = new Map();
  const visiting = new Set();
  const visit = (id) => {
    if (layer.has(id)) return layer.get(id);
    // A cycle cannot come from a checked definition; should one ever appear, it is cut rather than looped over.
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const dependencies = byId.get(id)?.dependsOn ?? [];
    const column = dependencies.length === 0 ? 0 : 1 + Math.max(...dependencies.map(visit));
    visiting.delete(id);
    layer.set(id, column);
    return column;
  };
  for (const step of steps) visit(step.id);
  return layer;
}

/** Columns of step ids, each ordered by the mean row of its steps' dependencies, then by list order. */
function orderedColumns(steps, layer) {
  const columns = [];
  const listIndex = new Map(steps.map((step, index) => [step.id, index]));
  for (const step of steps) (columns[layer.get(step.id)] ??= []).push(step);
  const row = new Map();
  return columns.map((column = []) => {
    const weight = (step) => {
      const placed = step.dependsOn.filter((id) => row.has(id)).map((id) => row.get(id));
      return placed.length === 0 ? listIndex.get(step.id) : placed.reduce((sum, value) => sum + value, 0) / placed.length;
    };
    const ordered = [...column].sort((a, b) => weight(a) - weight(b) || listIndex.get(a.id) - listIndex.get(b.id));
    ordered.forEach((step, index) => row.set(step.id, index));
    return ordered;
  });
}

/** `{ nodes: [{ step, x, y }], edges: [{ from, to, path }], width, height }` in SVG user units; boxes `boxHeight` tall. */
export function layoutGraph(steps, boxHeight = NODE.height) {
  const columns = orderedColumns(steps, longestPathLayers(steps));
  const tallest = Math.max(1, ...columns.map((column) => column.length));
  const height = NODE.margin * 2 + tallest * boxHeight + (tallest - 1) * NODE.rowGap;
  const nodes = columns.flatMap((column, columnIndex) => {
    const columnHeight = column.length * boxHeight + (column.length - 1) * NODE.rowGap;
    const top = (height - columnHeight) / 2;
    return column.map((step, rowIndex) => ({
      step,
      x: NODE.margin + columnIndex * (NODE.width + NODE.columnGap),
      y: top + rowIndex * (boxHeight + NODE.rowGap),
    }));
  });
  const at = new Map(nodes.map((node) => [node.step.id, node]));
  const edges = nodes.flatMap((node) =>
    node.step.dependsOn.filter((id) => at.has(id)).map((id) => ({ from: id, to: node.step.id, path: edgePath(at.get(id), node, boxHeight) })),
  );
  const width = NODE.margin * 2 + columns.length * NODE.width + Math.max(0, columns.length - 1) * NODE.columnGap;
  return { nodes, edges, width, height };
}

/** A smooth curve from the right edge of one node to the left edge of the next, leaving room for the arrowhead. */
function edgePath(from, to, boxHeight) {
  const x1 = from.x + NODE.width;
  const y1 = from.y + boxHeight / 2;
  const x2 = to.x - 4;
  const y2 = to.y + boxHeight / 2;
  const bend = Math.max(20, (x2 - x1) / 2);
  return `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}`;
}
