// The burst (row 26 of the fault matrix in docs/reliability.md, in the soak): far more workflows than the consumers can take,
// started at once from many clients while the regular soak runs, so Shepherd's own queue backs up. What it
// must show: the backlog fails nobody (no attempt used up by waiting in our queue), and whatever
// back-pressure the engine applies is visible to clients (429/503 + Retry-After), never inside a workflow.
//
// Following thousands of workflows the way the regular driver does (each polled every ≤ 1 s) would be
// a load of its own, and the harness's load must not be what the soak measures. So the follower asks the
// D1 index, a page of 100 rows per request, which of them look ended, confirms those on their objects, and
// reads a few others each round (least recently read first) in case the index lags an object.
/* global setInterval, clearInterval */
import { mapPool, sleep } from "../../scripts/lib/async.ts";
import { TERMINAL_STATUSES } from "./client.ts";
import { BACK_PRESSURE_STATUSES, startUntilAccepted } from "./starts.ts";
import { buildWorkflows } from "./workload.ts";

export const BURST_KIND = "burst";
/** Three steps, not 3–5: the burst is about the queue's backlog, and the CI machine has two cores. */
export const BURST_STEPS = 3;
/** Pause between follower rounds; each round is ≤ (started / 100 + 5) index pages and ≤ MAX_READS_PER_ROUND reads. */
const FOLLOW_INTERVAL_MS = 3_000;
const MAX_READS_PER_ROUND = 150;
/** Objects read per round although the index does not call them ended (an index write can fail or lag). */
const ROTATION_PER_ROUND = 20;
const READ_CONCURRENCY = 4;

/** The burst's workflows: like the soak's (same remote, faults, retry policy; no scheduleToStartMs), 3 steps. */
export function buildBurstWorkflows({ seed, count, remoteUrl, remoteFaults }) {
  return buildWorkflows({ seed, count, remoteUrl, remoteFaults, kind: BURST_KIND, minSteps: BURST_STEPS, maxSteps: BURST_STEPS });
}

/**
 * Starts every burst workflow at once from `clients` concurrent clients (each honouring Retry-After), then
 * follows them to a terminal status until `deadline`. Skips follower rounds while `paused()` (the restart).
 * Returns a handle: `done` resolves to {results, summary}; `allStarted` resolves once the last start was
 * answered (the backlog is at its peak then); `openSample(n)` names up to n open workflows (rotating) for
 * the alarm sampler; `counts()` is for the console.
 */
export function driveBurst({ client, workflows, clients, deadline, paused, onProgress }) {
  const results = new Map(
    workflows.map((wf) => [wf.id, { id: wf.id, kind: BURST_KIND, started: false, startTries: 0, startStatuses: {}, terminal: false, status: null, polls: 0, pollErrors: 0, observedEndAt: null, lastReadAt: 0 }]),
  );
  const open = new Set();
  const summary = { size: workflows.length, steps: BURST_STEPS, clients, startedAt: Date.now(), lastStartAt: null, startsDone: false, followRounds: 0, indexPages: 0, objectReads: 0, indexErrors: 0 };
  let sampleCursor = 0;

  const counts = () => {
    let started = 0;
    let terminal = 0;
    let backPressure = 0;
    for (const r of results.values()) {
      if (r.started) started += 1;
      if (r.terminal) terminal += 1;
      for (const n of Object.values(r.backPressure ?? {})) backPressure += n;
    }
    return { started, terminal, backPressure, total: results.size };
  };

  let markAllStarted;
  const allStarted = new Promise((resolve) => {
    markAllStarted = resolve;
  });

  async function startAll() {
    await mapPool(workflows, clients, async (wf) => {
      const result = results.get(wf.id);
      result.started = await startUntilAccepted(client, wf.payload, result, { deadline });
      if (!result.started) return;
      summary.lastStartAt = Date.now();
      open.add(wf.id);
    });
    summary.startsDone = true;
    markAllStarted(summary);
  }

  /** Every burst row of the index, id → status; null when a page did not come back (try again next round). */
  async function readIndex() {
    const rows = new Map();
    let cursor;
    const maxPages = Math.ceil(workflows.length / 100) + 5;
    for (let page = 0; page < maxPages; page++) {
      const res = await client.listWorkflows(cursor, { name: workflows[0].payload.definition.name });
      summary.indexPages += 1;
      if (res.status !== 200 || !Array.isArray(res.body?.workflows)) {
        summary.indexErrors += 1;
        return null;
      }
      for (const row of res.body.workflows) rows.set(row.id, row.status);
      cursor = res.body.nextCursor;
      if (!cursor) break;
    }
    return rows;
  }

  async function readObject(id) {
    const result = results.get(id);
    const res = await client.getWorkflow(id);
    summary.objectReads += 1;
    result.polls += 1;
    result.lastReadAt = Date.now();
    if (res.status !== 200) {
      result.pollErrors += 1;
      return;
    }
    result.status = res.body.status;
    if (TERMINAL_STATUSES.has(res.body.status)) {
      result.terminal = true;
      result.observedEndAt = Date.now();
      open.delete(id);
    }
  }

  async function follow() {
    while (Date.now() < deadline && (!summary.startsDone || open.size > 0)) {
      await sleep(Math.min(FOLLOW_INTERVAL_MS, Math.max(0, deadline - Date.now())));
      if (paused() || open.size === 0) continue;
      summary.followRounds += 1;
      const index = await readIndex();
      const ended = index ? [...open].filter((id) => TERMINAL_STATUSES.has(index.get(id))) : [];
      const endedSet = new Set(ended);
      const rotation = [...open]
        .filter((id) => !endedSet.has(id))
        .sort((a, b) => results.get(a).lastReadAt - results.get(b).lastReadAt)
        .slice(0, ROTATION_PER_ROUND);
      const reads = [...ended.slice(0, MAX_READS_PER_ROUND - rotation.length), ...rotation];
      await mapPool(reads, READ_CONCURRENCY, readObject);
    }
  }

  const progress = setInterval(() => {
    const c = counts();
    onProgress?.(c);
  }, 5_000);

  const done = (async () => {
    try {
      await Promise.all([startAll(), follow()]);
    } finally {
      clearInterval(progress);
    }
    const list = [...results.values()];
    const backPressure = {};
    const retryAfterMs = [];
    for (const r of list) {
      for (const [label, n] of Object.entries(r.backPressure ?? {})) backPressure[label] = (backPressure[label] ?? 0) + n;
      retryAfterMs.push(...(r.retryAfterMs ?? []));
    }
    const started = list.filter((r) => r.started);
    return {
      results: list,
      summary: {
        ...summary,
        started: started.length,
        terminal: list.filter((r) => r.terminal).length,
        // From the first request to the last accepted start: how long the front door took to take them all.
        startMs: summary.lastStartAt === null ? null : summary.lastStartAt - summary.startedAt,
        startTries: list.reduce((sum, r) => sum + r.startTries, 0),
        backPressure,
        backPressureTotal: Object.values(backPressure).reduce((sum, n) => sum + n, 0),
        retryAfterMs: retryAfterMs.length ? { min: retryAfterMs.reduce((a, b) => Math.min(a, b)), max: retryAfterMs.reduce((a, b) => Math.max(a, b)), n: retryAfterMs.length } : null,
        // Answers that were neither accepted nor back-pressure, e.g. no answer during the restart.
        otherStartStatuses: mergeCounts(list.map((r) => r.startStatuses), (status) => !["200", "201"].includes(status) && !BACK_PRESSURE_STATUSES.has(Number(status))),
      },
    };
  })();

  return {
    done,
    allStarted,
    counts,
    openSample(n) {
      const ids = [...open];
      if (ids.length <= n) return ids;
      sampleCursor = (sampleCursor + n) % ids.length;
      return Array.from({ length: n }, (_, i) => ids[(sampleCursor + i) % ids.length]);
    },
  };
}

function mergeCounts(tables, keep) {
  const merged = {};
  for (const table of tables) {
    for (const [key, n] of Object.entries(table)) if (keep(key)) merged[key] = (merged[key] ?? 0) + n;
  }
  return merged;
}
