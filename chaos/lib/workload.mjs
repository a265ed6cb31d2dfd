// The soak's workload: the workflows it starts (built from the seed) and the driver that starts them with
// bounded concurrency, polls each to a terminal status, and restarts Shepherd once halfway through.
/* global setInterval, clearInterval */
import { isDeclined, seededRandom } from "./faults.mjs";
import { sleep } from "./processes.mjs";
import { TERMINAL_STATUSES } from "./client.mjs";

const POLL_MIN_MS = 200;
const POLL_MAX_MS = 1_000;
const START_RETRY_MAX_MS = 2_000;

/**
 * Small timeouts and a fast retry policy, so that every injected fault is detected and retried within a
 * few seconds and 200 workflows fit in a couple of minutes.
 */
const STEP_DEFAULTS = {
  retry: { maxAttempts: 5, initialIntervalMs: 100, backoffCoefficient: 2, maxIntervalMs: 2_000, jitter: 0.2 },
  timeouts: { scheduleToStartMs: 3_000, heartbeatMs: 1_000 },
};

/**
 * Builds `count` workflows of 3–5 sequential steps, each step with a compensation. Also predicts, from the
 * remote's fault plan, which ones the remote will decline (422) and so must end `compensated`.
 */
export function buildWorkflows({ seed, count, remoteUrl, remoteFaults }) {
  const random = seededRandom(seed, "workload");
  const workflows = [];
  for (let i = 1; i <= count; i++) {
    const id = `chaos-${seed}-${String(i).padStart(4, "0")}`;
    const stepCount = 3 + Math.floor(random() * 3);
    const steps = [];
    for (let s = 1; s <= stepCount; s++) {
      const stepId = `s${s}`;
      steps.push({
        id: stepId,
        action: { type: "http", url: `${remoteUrl}/act/${stepId}`, method: "POST", body: { workflow: "{{ workflow.id }}", step: stepId, n: "{{ input.n }}" } },
        // No template on the step's own output: a step interrupted mid-attempt is compensated too, and it
        // has no output to read (a missing template value would fail the compensation for good).
        compensate: { type: "http", url: `${remoteUrl}/compensate/${stepId}`, method: "POST", body: { workflow: "{{ workflow.id }}", step: stepId } },
        timeouts: { startToCloseMs: 2_000 + Math.floor(random() * 1_001) },
      });
    }
    const declinedStep = steps.find((step) => isDeclined(seed, `${id}:${step.id}`, remoteFaults))?.id ?? null;
    workflows.push({
      id,
      declinedStep,
      payload: { id, input: { n: i }, definition: { name: "chaos-soak", onFailure: "compensate", defaults: STEP_DEFAULTS, steps } },
    });
  }
  return workflows;
}

/**
 * Starts and follows every workflow, `concurrency` at a time, until all are terminal or `deadline` passes.
 * After `restartAfter` starts, new starts pause while `restart()` runs (pollers keep going and see the
 * outage). `onStarted`/`onEnded` tell which workflows are in flight; `onProgress` gets counts for the console.
 */
export async function driveWorkload({ client, workflows, concurrency, deadline, restartAfter, restart, onStarted, onEnded, onProgress }) {
  const results = new Map(workflows.map((wf) => [wf.id, { id: wf.id, started: false, startTries: 0, startStatuses: {}, terminal: false, status: null, polls: 0, pollErrors: 0, observedEndAt: null }]));
  let next = 0;
  let startedCount = 0;
  let restartGate = null;
  let restartTriggered = false;

  async function startOne(wf, result) {
    let backoff = 250;
    while (Date.now() < deadline) {
      result.startTries += 1;
      const res = await client.startWorkflow(wf.payload);
      result.startStatuses[res.status] = (result.startStatuses[res.status] ?? 0) + 1;
      // 200 means the same id and body were already started: a retried start after a lost answer.
      if (res.status === 201 || res.status === 200) return true;
      if (res.status >= 400 && res.status < 500 && res.status !== 429) {
        result.startError = res.body;
        return false;
      }
      await sleep(backoff);
      backoff = Math.min(START_RETRY_MAX_MS, backoff * 2);
    }
    return false;
  }

  async function followOne(result) {
    let wait = POLL_MIN_MS;
    while (Date.now() < deadline) {
      await sleep(Math.min(wait, Math.max(0, deadline - Date.now())));
      const res = await client.getWorkflow(result.id);
      result.polls += 1;
      if (res.status === 200) {
        result.status = res.body.status;
        if (TERMINAL_STATUSES.has(res.body.status)) {
          result.terminal = true;
          result.observedEndAt = Date.now();
          return;
        }
      } else {
        result.pollErrors += 1;
      }
      wait = Math.min(POLL_MAX_MS, Math.ceil(wait * 1.5));
    }
  }

  const progress = setInterval(() => {
    const done = [...results.values()].filter((r) => r.terminal).length;
    onProgress?.({ started: startedCount, done, total: workflows.length });
  }, 5_000);

  const lanes = Array.from({ length: Math.min(concurrency, workflows.length) }, async () => {
    while (next < workflows.length && Date.now() < deadline) {
      if (restartGate) await restartGate;
      const wf = workflows[next++];
      const result = results.get(wf.id);
      result.started = await startOne(wf, result);
      if (!result.started) continue;
      startedCount += 1;
      onStarted?.(wf.id);
      if (!restartTriggered && restartAfter !== null && startedCount >= restartAfter) {
        restartTriggered = true;
        restartGate = restart().finally(() => {
          restartGate = null;
        });
      }
      await followOne(result);
      onEnded?.(wf.id);
    }
  });
  await Promise.all(lanes);
  // A restart still running when the lanes ran out of time is awaited, so nothing is left behind.
  if (restartGate) await restartGate;
  clearInterval(progress);
  return [...results.values()];
}
