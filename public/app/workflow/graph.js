// The step graph: the DAG as inline SVG, one box per step coloured by its status, an arrow per dependency.
// Clicking a step selects it, and the page scrolls its timeline into view. A map's node carries its items' progress,
// a worker step's node its pool (where its task waits for one of the user's workers). A definition's steps, which
// have no status since nothing ran, are drawn the same way in plain boxes, each naming its kind, and select nothing.
import { html } from "../html.js";
import { layoutGraph, NODE } from "./layout.js";
import { statusLabel } from "../statuses.js";
import { kindLabel } from "../step-kinds.js";
import { itemCountWords } from "./map-progress.js";

const MAX_LABEL = 20;
/** What fits on a node's second line, where a pool's name follows the status. */
const STATUS_LINE = 23;

const RUN_CAPTION = "Each step after the steps it depends on, coloured by its status. Click a step to see its attempts.";

/**
 * `onSelect` makes the steps buttons; without it the graph is a picture (a definition's), and the figure itself takes
 * the focus, so a keyboard can scroll a graph wider than the page.
 */
export function StepGraph({ steps, selected, onSelect, caption = RUN_CAPTION }) {
  const { nodes, edges, width, height } = layoutGraph(steps);
  const status = new Map(steps.map((step) => [step.id, step.status]));
  return html`
    <figure class="graph" data-testid="step-graph" tabindex=${onSelect ? undefined : "0"}>
      <svg viewBox="0 0 ${width} ${height}" width=${width} height=${height} role="img" aria-label="Step graph">
        <defs>
          <marker id="graph-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 8 4 L 0 8 z" />
          </marker>
        </defs>
        ${edges.map(
          (edge) =>
            html`<path class=${`edge ${status.get(edge.from) === "succeeded" ? "done" : ""}`} d=${edge.path} marker-end="url(#graph-arrow)"
              data-edge=${`${edge.from}->${edge.to}`} />`,
        )}
        ${nodes.map((node) => html`<${GraphNode} key=${node.step.id} node=${node} selected=${selected === node.step.id} onSelect=${onSelect} />`)}
      </svg>
      <figcaption class="muted">${caption}</figcaption>
    </figure>
  `;
}

function GraphNode({ node, selected, onSelect }) {
  const { step, x, y } = node;
  const kind = kindLabel(step.kind) ?? step.actionType;
  const pool = kindLabel(step.kind) === undefined ? step.pool : undefined;
  return html`
    <g class=${`graph-node ${step.status ?? "planned"} ${selected ? "selected" : ""}`} transform="translate(${x} ${y})" data-testid=${`graph-node-${step.id}`}
      data-status=${step.status} ...${onSelect ? buttonProps(step, onSelect) : {}}>
      <title>${step.id}${step.status ? ` — ${step.status}` : ""}${kind ? ` (${kind})` : ""}${pool ? ` (pool ${pool})` : ""}${step.items ? `: ${itemCountWords(step.items)} of ${step.items.total} items` : ""}${step.child ? `, child ${step.child.id} (${step.child.status})` : ""}</title>
      <rect width=${NODE.width} height=${NODE.height} rx="7" />
      <text class="node-id" x="12" y="19">${shorten(step.id)}</text>
      <text class="node-status" x="12" y="35">${nodeLine(step)}${step.items ? ` ${step.items.succeeded}/${step.items.total}` : ""}</text>
      ${step.items && html`<${ItemsBar} items=${step.items} />`}
    </g>
  `;
}

/**
 * The node's second line. A run's step: its status, then its kind or the pool it waits in ("scheduled · pool gpu").
 * A definition's step: its kind, or its action's type and pool ("http", "worker · pool gpu").
 */
function nodeLine(step) {
  const kind = kindLabel(step.kind);
  const lead = step.status === undefined ? (kind ?? step.actionType) : statusLabel(step.status);
  const after = step.status === undefined ? undefined : kind;
  const pool = kind === undefined && step.pool ? `pool ${shorten(step.pool, Math.max(4, STATUS_LINE - (lead ?? "").length - " · pool ".length))}` : undefined;
  return [lead, after ?? pool].filter(Boolean).join(" · ");
}

/** What makes a run's node a button: Enter and Space select it as a click does. */
function buttonProps(step, onSelect) {
  const select = () => onSelect(step.id);
  const onKeyDown = (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      select();
    }
  };
  return { role: "button", tabindex: "0", "aria-label": `${step.id}: ${step.status}`, onClick: select, onKeyDown };
}

/** A map's items along the node's foot: the share that ended, the failed ones marked apart. */
function ItemsBar({ items }) {
  const width = NODE.width - 24;
  const share = (n) => (items.total === 0 ? 0 : (n / items.total) * width);
  const ended = share(items.succeeded + items.failed + items.skipped);
  return html`
    <g class="node-items" transform="translate(12 39)">
      <rect class="track" width=${width} height="3" rx="1.5" />
      <rect class="ended" width=${items.total === 0 ? width : ended} height="3" rx="1.5" />
      ${items.failed > 0 && html`<rect class="failed" x=${share(items.succeeded)} width=${Math.max(2, share(items.failed))} height="3" />`}
    </g>
  `;
}

function shorten(text, max = MAX_LABEL) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
