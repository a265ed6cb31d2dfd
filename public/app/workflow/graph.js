// The step graph: the DAG as inline SVG, one box per step coloured by its status, an arrow per dependency.
// Clicking a step selects it, and the page scrolls its timeline into view. A map's node carries its items' progress,
// a worker step's node its pool (where its task waits for one of the user's workers). A definition's steps, which
// have no status since nothing ran, are drawn the same way in plain boxes, each naming its kind, and select nothing.
import { html } from "../html.js";
import { layoutGraph, NODE, nodeHeight } from "./layout.js";
import { statusLabel, stepColour } from "../statuses.js";
import { ACCEPTED_JOB, kindLabel } from "../step-kinds.js";
import { itemCountWords } from "./map-progress.js";
import { ID_FONT, idLines, STATUS_FONT, statusLines } from "./node-lines.js";

/** Where a box's first line sits, and its text's margins. */
const FIRST_BASELINE = 19;
const TEXT_X = 12;
const TEXT_WIDTH = NODE.width - 2 * TEXT_X;

let canvas;
/** How wide a text is in that font, in pixels, as the browser draws it. */
const measureIn = (font) => (text) => {
  canvas ??= document.createElement("canvas").getContext("2d");
  canvas.font = font;
  return canvas.measureText(text).width;
};
const measureId = measureIn(ID_FONT);
const measureStatus = measureIn(STATUS_FONT);

const RUN_CAPTION = "Each step after the steps it depends on, coloured by its status. Click a step to see its attempts.";

/**
 * `onSelect` makes the steps buttons; without it the graph is a picture (a definition's), and the figure itself takes
 * the focus, so a keyboard can scroll a graph wider than the page.
 */
export function StepGraph({ steps, selected, onSelect, caption = RUN_CAPTION }) {
  const words = new Map(steps.map((step) => [step.id, nodeWords(step)]));
  const boxHeight = nodeHeight(Math.max(...[...words.values()].map(({ id, status }) => id.length + status.length)));
  const { nodes, edges, width, height } = layoutGraph(steps, boxHeight);
  const status = new Map(steps.map((step) => [step.id, step.status]));
  // Buttons inside an image would be hidden from a screen reader: a run's graph is a group of them.
  return html`
    <figure class="graph" data-testid="step-graph" tabindex=${onSelect ? undefined : "0"}>
      <svg viewBox="0 0 ${width} ${height}" width=${width} height=${height} role=${onSelect ? "group" : "img"} aria-label="Step graph">
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
        ${nodes.map(
          (node) =>
            html`<${GraphNode} key=${node.step.id} node=${node} words=${words.get(node.step.id)} boxHeight=${boxHeight} selected=${selected === node.step.id} onSelect=${onSelect} />`,
        )}
      </svg>
      <figcaption class="muted">${caption}</figcaption>
    </figure>
  `;
}

/**
 * What a box says, line by line: its id, then its second line. A run's step: its status, then its kind, its 202 job or
 * the pool it waits in ("scheduled · pool gpu"), and a map's items. A definition's step: its kind, or its action's type
 * and pool ("http", "worker · pool gpu").
 */
function nodeWords(step) {
  const kind = kindLabel(step.kind);
  const pool = kind === undefined ? step.pool : undefined;
  const accepted = step.status && stepColour(step) === ACCEPTED_JOB.colour ? ACCEPTED_JOB.label : undefined;
  const lead = step.status === undefined ? (kind ?? step.actionType) : statusLabel(step.status);
  const after = step.status === undefined ? undefined : (kind ?? accepted);
  const items = step.items ? ` ${step.items.succeeded}/${step.items.total}` : "";
  const line = `${[lead, after ?? (pool && `pool ${pool}`)].filter(Boolean).join(" · ")}${items}`;
  return { id: idLines(step.id, TEXT_WIDTH, measureId), status: statusLines(line, TEXT_WIDTH, measureStatus), kind: kind ?? step.actionType, pool };
}

function GraphNode({ node, words, boxHeight, selected, onSelect }) {
  const { step, x, y } = node;
  const status = step.status ?? "planned";
  const colour = step.status ? stepColour(step) : status;
  const baseline = (line) => FIRST_BASELINE + line * NODE.line;
  // A box's name is the words it shows (what a screen reader's user hears is what others see); its tooltip has them whole.
  const name = `${words.id.join("")} ${words.status.join(" ")}`;
  return html`
    <g class=${`graph-node ${status} ${colour === status ? "" : colour} ${selected ? "selected" : ""}`} transform="translate(${x} ${y})"
      data-testid=${`graph-node-${step.id}`} data-status=${step.status} ...${onSelect ? buttonProps(step, name, onSelect) : {}}>
      <title>${nodeTitle(step, words, colour)}</title>
      <rect width=${NODE.width} height=${boxHeight} rx="7" />
      ${words.id.map((line, i) => html`<text class="node-id" style=${{ font: ID_FONT }} x=${TEXT_X} y=${baseline(i)}>${line}</text>`)}
      ${words.status.map((line, i) => html`${" "}<text class="node-status" style=${{ font: STATUS_FONT }} x=${TEXT_X} y=${baseline(words.id.length + i)}>${line}</text>`)}
      ${step.items && html`<${ItemsBar} items=${step.items} y=${boxHeight - 7} />`}
    </g>
  `;
}

/** What makes a run's node a button: Enter and Space select it as a click does. */
function buttonProps(step, name, onSelect) {
  const select = () => onSelect(step.id);
  const onKeyDown = (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      select();
    }
  };
  return { role: "button", tabindex: "0", "aria-label": name, onClick: select, onKeyDown };
}

/** The box's tooltip: all it says, whole, and what its lines have no room for (a child workflow). */
function nodeTitle(step, { kind, pool }, colour) {
  const parts = [
    step.id,
    step.status && ` — ${step.status}`,
    kind && ` (${kind})`,
    pool && ` (pool ${pool})`,
    colour === ACCEPTED_JOB.colour && ` (${ACCEPTED_JOB.legend})`,
    step.items && `: ${itemCountWords(step.items)} of ${step.items.total} items`,
    step.child && `, child ${step.child.id} (${step.child.status})`,
  ];
  return parts.filter(Boolean).join("");
}

/** A map's items along the node's foot: the share that ended, the failed ones marked apart. */
function ItemsBar({ items, y }) {
  const width = NODE.width - 24;
  const share = (n) => (items.total === 0 ? 0 : (n / items.total) * width);
  const ended = share(items.succeeded + items.failed + items.skipped);
  return html`
    <g class="node-items" transform="translate(${TEXT_X} ${y})">
      <rect class="track" width=${width} height="3" rx="1.5" />
      <rect class="ended" width=${items.total === 0 ? width : ended} height="3" rx="1.5" />
      ${items.failed > 0 && html`<rect class="failed" x=${share(items.succeeded)} width=${Math.max(2, share(items.failed))} height="3" />`}
    </g>
  `;
}
