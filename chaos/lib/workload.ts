// The soak's workload: the workflows it starts (built from the seed) and the driver that starts them with
// bounded concurrency, polls each to a terminal status, and restarts Shepherd once halfway through.
/* global setInterval, clearInterval */
import { mapPool, sleep } from "../../scripts/lib/async.ts";
import { TERMINAL_STATUSES } from "./client.ts";
import { isDeclined, MAIN_REMOTE_BREAKER, seededRandom } from "./faults.ts";
import { startUntilAccepted } from "./starts.ts";
import { languagePlans, languageSteps, newLanguageRecord, prepareStart, sendEvent, SLEEP_STEP, WAIT_STEP } from "./language.ts";

const POLL_MIN_MS = 200;
const POLL_MAX_MS = 1_000;
/**
 * Once due, the restart waits up to this long (starts go on meanwhile) for a moment when a workflow of the
 * language has something the crash could lose: an event in its inbox, or a sleep with time left.
 */
const RESTART_DEFER_MAX_MS = 8_000;
/** A sleep with less left than this may wake before the kill lands. */
const SLEEP_LEFT_MIN_MS = 700;

/**
 * Small timeouts and a fast retry policy, so that every injected fault is detected and retried within a
 * few seconds and 200 workflows fit in a couple of minutes. No scheduleToStartMs: the soak runs the
 * default, which must never fail a workflow because Shepherd's own queue is slow (docs/architecture.md, "Dispatch under
 * load"); a lost dispatch has to be found by the engine, not by a deadline the harness chose. The breaker
 * needs 50 failures in a row to open: the remote's faults alone would trip the default 5 (faults.ts says why).
 */
const STEP_DEFAULTS = {
  retry: { maxAttempts: 5, initialIntervalMs: 100, backoffCoefficient: 2, maxIntervalMs: 2_000, jitter: 0.2 },
  timeouts: { heartbeatMs: 1_000 },
  breaker: MAIN_REMOTE_BREAKER,
};

/**
 * Builds `count` workflows of `minSteps`–`maxSteps` sequential steps (3–5 unless told), each step with a
 * compensation. Also predicts, from the remote's fault plan, which ones the remote will decline (422) and so
 * must end `compensated`. `kind` names the family: it is the definition's name (so the index can be listed
 * by family), part of the ids, and the salt of the family's own random choices, so adding a family never
 * changes another's workflows. `languageShare` of them (the regular soak's: a quarter) also get a sleep and
 * a wait for an event after their first action (lib/language.ts); their own choices have their own salt,
 * so the action steps, timeouts and declines are the same as without them.
 */
export function buildWorkflows({ seed, count, remoteUrl, remoteFaults, kind = "soak", minSteps = 3, maxSteps = 5, languageShare = 0 }) {
  const random = seededRandom(seed, kind === "soak" ? "workload" : kind);
  const workflows = [];
  const prefix = kind === "soak" ? `chaos-${seed}` : `chaos-${seed}-${kind}`;
  const width = Math.max(4, String(count).length);
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${String(i + 1).padStart(width, "0")}`);
  const plans = languageShare > 0 ? languagePlans(seed, ids, languageShare) : new Map();
  for (let i = 1; i <= count; i++) {
    const id = ids[i - 1];
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
    const language = plans.get(id) ?? null;
    // The sleep and the wait come after the first action: it gives an early event time to arrive first.
    if (language) steps.splice(1, 0, ...languageSteps(language, steps[0].id));
    workflows.push({
      id,
      kind,
      declinedStep,
      // Whether the remote declines an action before the wait: then the wait is never reached.
      declinedBeforeWait: language !== null && declinedStep === steps[0].id,
      language,
      payload: { id, input: { n: i }, definition: { name: `chaos-${kind}`, onFailure: "compensate", defaults: STEP_DEFAULTS, steps } },
    });
  }
  return workflows;
}

/**
 * Starts and follows every workflow, `concurrency` at a time, until all are terminal or `deadline` passes.
 * After `restartAfter` starts, or once `restartSignal` resolves if that comes first, new starts pause while
 * `restart()` runs (pollers keep going and see the outage); `restartAfter` null means no restart. The kill
 * waits up to RESTART_DEFER_MAX_MS for a workflow of the language to hold an event in its inbox or sleep (see
 * `crashWorthy`), so the crash tests that neither is lost. A signal that comes after the workload ended is
 * ignored, so no restart outlives the driver.
 * `onStarted`/`onEnded` tell which workflows are in flight; `onProgress` gets counts for the console.
 */
export async function driveWorkload({ client, workflows, concurrency, deadline, restartAfter, restartSignal, restart, onStarted, onEnded, onProgress }) {
  const results = new Map(workflows.map((wf) => [wf.id, { id: wf.id, started: false, startTries: 0, startStatuses: {}, terminal: false, status: null, polls: 0, pollErrors: 0, observedEndAt: null }]));
  let startedCount = 0;
  let restartGate = null;
  let restartDone = null;
  let restartTriggered = false;
  /** From the trigger to the end of the restart: late events are held meanwhile, so a wait spans the crash. */
  let restartPending = false;
  let finished = false;

  /**
   * What the crash would catch in this reading of a language workflow, or null: a sleep with time left, its
   * event in the inbox while the wait cannot start for a while yet (the first action still runs, or the
   * sleep has time left), or a wait whose late event is held.
   */
  const crashCatches = (r, view, now) => {
    const steps = view?.steps ?? [];
    const sleepStep = steps.find((step) => step.id === SLEEP_STEP);
    const waitStep = steps.find((step) => step.id === WAIT_STEP);
    const sleepLeft = sleepStep?.status === "sleeping" ? sleepStep.sleepingUntil - now : null;
    const inInbox = (view?.pendingEvents ?? []).some((e) => e.id === r.language.event.id);
    const what = [];
    if (sleepLeft !== null && sleepLeft >= SLEEP_LEFT_MIN_MS) what.push(`sleeps ${sleepLeft} ms more`);
    if (inInbox && (sleepStep?.status === "pending" || (sleepLeft ?? 0) >= SLEEP_LEFT_MIN_MS)) what.push("holds its event in the inbox");
    if (r.language.heldForRestart && waitStep?.status === "waiting") what.push("waits for its event (held until Shepherd is back)");
    return what.length ? `${r.id} ${what.join(" and ")}` : null;
  };

  /** What the crash could lose now: candidates from the last readings, confirmed by a fresh one; null when nothing. */
  const crashWorthy = async () => {
    for (const r of results.values()) {
      if (!r.language || !r.started || r.terminal) continue;
      const buffered = r.language.sends.some((send) => send.phase === "first" && send.body?.consumed === false);
      // No reading yet after an event answered `consumed: false`: the send came first, so it may be in the inbox.
      if (!(r.lastView ? crashCatches(r, r.lastView, Date.now()) : buffered)) continue;
      const res = await client.getWorkflow(r.id);
      const caught = res.status === 200 ? crashCatches(r, res.body, Date.now()) : null;
      if (caught) return caught;
    }
    return null;
  };

  const triggerRestart = (reason) => {
    if (restartTriggered || finished || restartAfter === null) return;
    restartTriggered = true;
    restartPending = true;
    restartDone = (async () => {
      const from = Date.now();
      let caught = await crashWorthy();
      while (!caught && !finished && Date.now() - from < RESTART_DEFER_MAX_MS) {
        await sleep(100);
        caught = await crashWorthy();
      }
      if (finished) {
        restartPending = false;
        return;
      }
      const waited = Date.now() - from;
      restartGate = restart(`${reason}${caught ? `; ${waited ? `after ${waited} ms, ` : ""}when ${caught}` : `; no sleep, wait or buffered event to catch in ${waited} ms`}`);
      try {
        await restartGate;
      } finally {
        restartGate = null;
        restartPending = false;
      }
    })();
  };
  restartSignal?.then((reason) => triggerRestart(reason));

  async function followOne(result, onView) {
    let wait = POLL_MIN_MS;
    while (Date.now() < deadline) {
      await sleep(Math.min(wait, Math.max(0, deadline - Date.now())));
      const res = await client.getWorkflow(result.id);
      result.polls += 1;
      if (res.status === 200) {
        result.status = res.body.status;
        if (result.language) result.lastView = res.body;
        // Checked before the terminal status: an ended workflow has nothing to wait for.
        if (onView && (await onView(res.body)) === "poll soon") wait = POLL_MIN_MS;
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
    if (wf.language) {
      result.language = newLanguageRecord(wf);
      prepareStart(wf, result.language);
    }
    result.started = await startUntilAccepted(client, wf.payload, result, { deadline });
    if (!result.started) return;
    startedCount += 1;
    onStarted?.(wf.id);
    if (restartAfter !== null && startedCount >= restartAfter) triggerRestart(`${startedCount}/${workflows.length} regular workflows started`);
    let onView;
    if (wf.language) {
      const send = async () => {
        const first = await sendEvent(client, wf, result.language, { phase: "first", deadline });
        if (wf.language.event.duplicate && first.status >= 200 && first.status < 300) await sendEvent(client, wf, result.language, { phase: "duplicate", deadline });
      };
      // Early: at once, while the first action (and the sleep after it) still run, so the inbox keeps it.
      if (wf.language.event.timing === "early") await send();
      else {
        // Late: once the view shows the wait step waiting; while a restart is due or under way, only after it.
        let sent = false;
        onView = async (view) => {
          if (sent) return undefined;
          const step = view.steps?.find((s) => s.id === WAIT_STEP);
          if (step?.status !== "waiting") return view.steps?.find((s) => s.id === SLEEP_STEP)?.status === "sleeping" ? "poll soon" : undefined;
          result.language.waitingSeenAt ??= Date.now();
          if (restartPending) {
            result.language.heldForRestart = true;
            return "poll soon";
          }
          sent = true;
          await send();
          return "poll soon";
        };
      }
    }
    await followOne(result, onView);
    onEnded?.(wf.id);
  });
  finished = true;
  // A restart still running when the lanes ran out of time is awaited, so nothing is left behind.
  if (restartDone) await restartDone;
  clearInterval(progress);
  return [...results.values()];
}
