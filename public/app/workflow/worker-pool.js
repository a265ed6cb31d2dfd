// Steps whose action is `{"type": "worker", "pool": …}` run on the user's own workers, not on the service's agents:
// the workflow page names their pool, and a step waiting in a pool that no worker polls says so, since the
// workflow will wait there until someone starts one.
import { api } from "../api.js";
import { html } from "../html.js";
import { relative } from "../list/relative-time.js";
import { WORKER_SEEN_MINUTES } from "../list/pool-table.js";
import { href } from "../router.js";

export const WAITING_FOR_WORKER = "waiting_for_worker";

/**
 * The tenant's pools, only when a step waits for a worker (the one line that needs them); none when the
 * call fails, so the diagnosis still shows without the workers' side of it.
 */
export async function poolsFor(diagnosis) {
  if (!diagnosis.blockedOn.some((blocked) => blocked.reason === WAITING_FOR_WORKER)) return undefined;
  try {
    return (await api("/v1/pools")).pools;
  } catch {
    return undefined;
  }
}

/**
 * The view with each waiting worker step's `pool`, for the graph and the timeline to name it. The view itself
 * does not say which action a step runs; the diagnosis names the pool a task waits in now (after any moves to
 * its fallback pools), so it wins over a `pool` the view may carry.
 */
export function withPools(view, diagnosis) {
  const pools = new Map();
  for (const blocked of diagnosis?.blockedOn ?? []) if (blocked.pool && blocked.stepId) pools.set(blocked.stepId, blocked.pool);
  if (pools.size === 0) return view;
  return { ...view, steps: view.steps.map((step) => (pools.has(step.id) ? { ...step, pool: pools.get(step.id) } : step)) };
}

/** "`train`: waiting for a worker of pool gpu (none polled for 5 min) since 12:03:07." */
export function workerWaitWords({ id, blocked, since }, pools, now) {
  const name = blocked.pool ?? "?";
  return html`${id}: waiting for a worker of pool <a href=${href("pools")}><code>${name}</code></a>${workersSeen(name, pools, now)} since ${since}.`;
}

/** What the pools page says of the pool's workers; nothing when the pools could not be read. */
function workersSeen(name, pools, now) {
  if (pools === undefined) return "";
  const workers = pools.find((pool) => pool.name === name)?.workers ?? [];
  if (workers.length === 0) return ` (none polled for ${WORKER_SEEN_MINUTES} min)`;
  const latest = Math.min(Math.max(...workers.map((worker) => worker.lastPollAt)), now);
  return ` (${workers.length} worker${workers.length === 1 ? "" : "s"}, last poll ${relative(latest, now)})`;
}
