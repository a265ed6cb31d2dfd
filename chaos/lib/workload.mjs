// The soak's workload: the workflows it starts (built from the seed) and the driver that starts them with
// bounded concurrency, polls each to a terminal status, and restarts Shepherd once halfway through.
/* global setInterval, clearInterval */
import { mapPool, sleep } from "../../scripts/lib/async.mjs";
import { TERMINAL_STATUSES } from "./client.mjs";
import { isDeclined, seededRandom } from "./faults.mjs";
import { startUntilAccepted } from "./starts.mjs";

const POLL_MIN_MS = 200;
const POLL_MAX_MS = 1_000;

/**
 * Small timeouts and a fast retry policy, so that every injected fault is detected and retried within a
 * few seconds and 200 workflows fit in a couple of minutes. No scheduleToStartMs: the soak runs the
 * default, which must never fail a workflow because Shepherd's own queue is slow (docs/architecture.md, "Dispatch under
 * load"); a lost dispatch has to be found by the engine, not by a deadline the harness chose.
 */
const STEP_DEFAULTS = {
  retry: { maxAttempts: 5, initialIntervalMs: 100, backoffCoefficient: 2, maxIntervalMs: 2_000, jitter: 0.2 },
  timeouts: { heartbeatMs: 1_000 },
};

/**
 * Builds `count` workflows of `minSteps`–`maxSteps` sequential steps (3–5 unless told), each step with a
 * compensation. Also predicts, from the remote's fault plan, which ones the remote will decline (422) and so
 * must end `compensated`. `kind` names the family: it is the definition's name (so the index can be listed
 * by family), part of the ids, and the salt of the family's own random choices, so adding a family never
 * changes another's workflows.
 */
export function buildWorkflows({ seed, count, remoteUrl, remoteFaults, kind = "soak", minSteps = 3, maxSteps = 5 }) {
  const random = seededRandom(seed, kind === "soak" ? "workload" : kind);
  const workflows = [];
  const prefix = kind === "soak" ? `chaos-${seed}` : `chaos-${seed}-${kind}`;
  const width = Math.max(4, String(count).length);
  for (let i = 1; i <= count; i++) {
    const id = `${prefix}-${String(i).padStart(width, "0")}`;
    const stepCount = minSteps + Math.floor(random() * (maxSteps - minSteps + 1));
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
      kind,
      declinedStep,
      payload: { id, input: { n: i }, definition: { name: `chaos-${kind}`, onFailure: "compensate", defaults: STEP_DEFAULTS, steps } },
    });
  }
  return workflows;
}

/**
 * Starts and follows every workflow, `concurrency` at a time, until all are terminal or `deadline` passes.
 * After `restartAfter` starts, or once `restartSignal` resolves if that comes first, new starts pause while
 * `restart()` runs (pollers keep going and see the outage); `restartAfter` null means no restart. A signal
 * that comes after the workload ended is ignored, so no restart outlives the driver.
 * `onStarted`/`onEnded` tell which workflows are in flight; `onProgress` gets counts for the console.
 */
export async function driveWorkload({ client, workflows, concurrency, deadline, restartAfter, restartSignal, restart, onStarted, onEnded, onProgress }) {
  const results = new Map(workflows.map((wf) => [wf.id, { id: wf.id, started: false, startTries: 0, startStatuses: {}, terminal: false, status: null, polls: 0, pollErrors: 0, observedEndAt: null }]));
  let startedCount = 0;
  let restartGate = null;
  let restartTriggered = false;
  let finished = false;
  const triggerRestart = (reason) => {
    if (restartTriggered || finished || restartAfter === null) return;
    restartTriggered = true;
    restartGate = restart(reason).finally(() => {
      restartGate = null;
    });
  };
  restartSignal?.then((reason) => triggerRestart(reason));

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

  await mapPool(workflows, concurrency, async (wf) => {
    if (restartGate) await restartGate;
    const result = results.get(wf.id);
    result.started = await startUntilAccepted(client, wf.payload, result, { deadline });
    if (!result.started) return;
    startedCount += 1;
    onStarted?.(wf.id);
    if (restartAfter !== null && startedCount >= restartAfter) triggerRestart(`${startedCount}/${workflows.length} regular workflows started`);
    await followOne(result);
    onEnded?.(wf.id);
  });
  finished = true;
  // A restart still running when the lanes ran out of time is awaited, so nothing is left behind.
  if (restartGate) await restartGate;
  clearInterval(progress);
  return [...results.values()];
}
