// The rows of the pools page: each pool's queue (pending, how long the oldest has waited, running) and the
// workers that polled it lately. A pool whose tasks wait with no worker to take them is flagged, since nothing
// else on the service will ever run them.
import { html } from "../html.js";
import { TableScroll } from "./table-scroll.js";
import { age, relative } from "./relative-time.js";

/** The API lists the workers seen within this window, so an empty list means none polled for that long. */
export const WORKER_SEEN_MINUTES = 5;

/** The command that starts a worker for a pool, as the command line spells it. */
export function workerCommand(pool = "NAME") {
  return `shepherd worker --pool ${pool} -- <command>`;
}

export function isStarved(pool) {
  return pool.pending > 0 && pool.workers.length === 0;
}

export function PoolTable({ pools, now }) {
  return html`
    <${TableScroll} label="Pools">
      <table class="pool-list" data-testid="pool-list">
        <thead>
          <tr><th>Pool</th><th>Pending</th><th>Oldest pending</th><th>Running</th><th>Workers</th></tr>
        </thead>
        <tbody>
          ${pools.map((pool) => html`<${PoolRow} key=${pool.name} pool=${pool} now=${now} />`)}
        </tbody>
      </table>
    </${TableScroll}>
  `;
}

function PoolRow({ pool, now }) {
  const starved = isStarved(pool);
  return html`
    <tr data-pool=${pool.name} class=${starved ? "starved" : ""}>
      <td class="mono">${pool.name}</td>
      <td data-testid="pool-pending">${pool.pending}</td>
      <td data-testid="pool-oldest">${pool.pending > 0 ? age(pool.oldestPendingAgeMs) : "—"}</td>
      <td data-testid="pool-running">${pool.running}</td>
      <td>${starved ? html`<${NoWorker} pool=${pool} />` : html`<${Workers} workers=${pool.workers} now=${now} />`}</td>
    </tr>
  `;
}

function Workers({ workers, now }) {
  // The poll's time is the server's clock: one a little ahead of the browser's still reads as a past poll.
  const ago = (at) => relative(Math.min(at, now), now);
  if (workers.length === 0) return html`<span class="muted">none in the last ${WORKER_SEEN_MINUTES} min</span>`;
  return html`
    <div data-testid="worker-count">${workers.length} worker${workers.length === 1 ? "" : "s"}</div>
    <ul class="workers">
      ${workers.map((worker) => html`<li key=${worker.id} data-worker=${worker.id}><span class="mono">${worker.id}</span> <span class="muted">last poll ${ago(worker.lastPollAt)}</span></li>`)}
    </ul>
  `;
}

function NoWorker({ pool }) {
  return html`
    <div class="pool-warning" data-testid="pool-warning">
      <strong>No worker</strong> has polled this pool for ${WORKER_SEEN_MINUTES} min: its ${pool.pending} pending task${pool.pending === 1 ? "" : "s"} wait.
      Start one with <code>${workerCommand(pool.name)}</code>.
    </div>
  `;
}
