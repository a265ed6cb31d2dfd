// The post-run checks, as Temporal's omes harness and Restate's Jepsen suite do them: every workflow ended,
// no effect happened twice, the D1 index agrees with the objects, supervision never lapsed, and the run made
// real progress. Each check is {name, status: "pass" | "fail" | "skipped", detail, data?}.
import { judgeAlarm, OVERDUE_LIMIT_MS, probeDevRoute } from "./alarms.ts";
import { mapPool, sleep } from "../../scripts/lib/async.ts";
import { isDeepStrictEqual } from "node:util";
import { summarize } from "../../scripts/lib/stats.ts";
import { TERMINAL_STATUSES } from "./client.ts";
import { answersByPhase, SLEEP_STEP, WAIT_STEP } from "./language.ts";
import { fireAtOf, FIRE_EVERY_MS, gridTimes, SCHEDULE_DEFINITION_NAME, workflowIdOfFire } from "./schedule.ts";

const pass = (name, detail, data) => ({ name, status: "pass", detail, data });
const fail = (name, detail, data) => ({ name, status: "fail", detail, data });
const skipped = (name, detail, data) => ({ name, status: "skipped", detail, data });

/** A non-terminal workflow whose history has been silent this long is stuck, not merely slow. */
const STUCK_AFTER_MS = 10_000;

/**
 * Every workflow was started and reached completed/failed/compensated/cancelled within the bound. The ones
 * that did not are told apart: never started, still moving when time ran out, or stuck (history silent).
 */
export function checkTerminal(results, finals) {
  const name = "all workflows terminal";
  const now = Date.now();
  const notStarted = results.filter((r) => !r.started).map((r) => ({ id: r.id, startStatuses: r.startStatuses, error: r.startError }));
  const open = finals
    .filter((f) => f.view && !TERMINAL_STATUSES.has(f.view.status))
    .map((f) => {
      const lastEventAt = f.events.at(-1)?.at ?? f.view.updatedAt;
      return { id: f.id, status: f.view.status, silentMs: now - lastEventAt, steps: f.view.steps.map((s) => `${s.id}:${s.status}#${s.attempt}`).join(" ") };
    });
  const stuck = open.filter((o) => o.silentMs > STUCK_AFTER_MS);
  const moving = open.filter((o) => o.silentMs <= STUCK_AFTER_MS);
  const unreadable = finals.filter((f) => f.started && !f.view).map((f) => ({ id: f.id, status: f.readStatus }));
  const problems = notStarted.length + open.length + unreadable.length;
  const detail =
    `${results.length - problems}/${results.length} terminal` +
    (problems ? ` (not started ${notStarted.length}, still moving at the bound ${moving.length}, stuck > ${STUCK_AFTER_MS / 1000} s ${stuck.length}, unreadable ${unreadable.length})` : "");
  return (problems ? fail : pass)(name, detail, { stuck: stuck.slice(0, 20), movingAtBound: moving.slice(0, 20), unreadable: unreadable.slice(0, 20), notStarted: notStarted.slice(0, 10) });
}

/**
 * At most one applied effect per Idempotency-Key and per logical operation (workflow, step, action or
 * compensation), keys as the contract says, and effects that match each workflow's ending: a completed
 * workflow applied every action once and undid nothing; a compensated or cancelled one undid every action it
 * applied, and no action was applied after its compensation. Declined-by-design workflows end compensated.
 */
export function checkEffects(remoteStats, finals, workflows) {
  const name = "at most one effect per key";
  const violations = [];
  const keys = Object.values(remoteStats.keys);
  const keyByOp = new Map(keys.map((k) => [`${k.workflowId}|${k.stepId}|${k.kind}`, k]));
  for (const k of keys) {
    if (k.applied > 1) violations.push({ kind: "key applied twice", key: k.key, applied: k.applied });
    if (!k.wellFormed) violations.push({ kind: "malformed key", key: k.key, workflowId: k.workflowId, stepId: k.stepId });
  }
  for (const [op, applied] of Object.entries(remoteStats.ops)) {
    if (applied > 1) violations.push({ kind: "operation applied twice (key varied)", op, applied });
  }
  const declined = new Map(workflows.map((wf) => [wf.id, wf.declinedStep]));
  // Sleep and wait steps call no remote: only action steps have effects to count.
  const actionSteps = new Map(workflows.map((wf) => [wf.id, new Set(wf.payload.definition.steps.filter((s) => s.action).map((s) => s.id))]));
  let compensationsWithoutEffect = 0;
  for (const f of finals) {
    if (!f.view) continue;
    const status = f.view.status;
    if (declined.get(f.id) && status !== "compensated" && TERMINAL_STATUSES.has(status)) {
      violations.push({ kind: "declined by the remote but not compensated", id: f.id, status, declinedStep: declined.get(f.id) });
    }
    for (const step of f.view.steps) {
      if (actionSteps.has(f.id) && !actionSteps.get(f.id).has(step.id)) continue;
      const action = keyByOp.get(`${f.id}|${step.id}|action`);
      const undo = keyByOp.get(`${f.id}|${step.id}|compensation`);
      const applied = action?.applied ?? 0;
      const undone = undo?.applied ?? 0;
      if (status === "completed") {
        if (applied !== 1) violations.push({ kind: "completed but action applied ≠ 1", id: f.id, stepId: step.id, applied });
        if (undone > 0) violations.push({ kind: "completed but compensated", id: f.id, stepId: step.id });
      }
      if (status === "compensated" || status === "cancelled") {
        if (applied > 0 && undone === 0) violations.push({ kind: "effect left in place (applied, never compensated)", id: f.id, stepId: step.id, stepStatus: step.status });
        if (applied === 0 && undone > 0) compensationsWithoutEffect += 1;
      }
      if (action?.appliedAt && undo?.appliedAt && action.appliedAt > undo.appliedAt) {
        violations.push({ kind: "action applied after its compensation", id: f.id, stepId: step.id });
      }
    }
  }
  const t = remoteStats.totals;
  const detail =
    `${t.action.applied} effects / ${t.action.keys} action keys, ${t.compensation.applied} / ${t.compensation.keys} compensation keys` +
    `${compensationsWithoutEffect ? ` (${compensationsWithoutEffect} undoing an action never applied)` : ""}; ${violations.length} violation(s)`;
  return (violations.length ? fail : pass)(name, detail, { violations: violations.slice(0, 30), compensationsWithoutEffect });
}

/** Pages through GET /v1/workflows and compares each row's status with the object's own. */
export async function checkIndex(client, finals, { settleMs = 10_000 } = {}) {
  const name = "D1 index == objects";
  const maxPages = Math.ceil(finals.length / 100) + 5;
  const readIndex = async () => {
    const rows = new Map();
    let cursor;
    for (let page = 0; page < maxPages; page++) {
      const res = await client.listWorkflows(cursor);
      if (res.status === 404 || res.status === 405) return { missingApi: true, status: res.status };
      if (res.status !== 200 || !Array.isArray(res.body?.workflows)) return { error: `list answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}` };
      for (const row of res.body.workflows) {
        if (rows.has(row.id)) return { error: `row ${row.id} listed twice (cursor paging repeats rows)` };
        rows.set(row.id, row);
      }
      cursor = res.body.nextCursor;
      if (!cursor) return { rows };
    }
    return { error: `more than ${maxPages} pages` };
  };

  // The index may trail the objects (it is written after the object commits), so mismatches get a short
  // bounded time to settle before they count.
  let started = Date.now();
  let swept;
  let mismatches = [];
  let index;
  for (let round = 0; ; round++) {
    index = await readIndex();
    if (index.missingApi) return skipped(name, `skipped (no list API: GET /v1/workflows answered ${index.status})`);
    if (index.error) return fail(name, index.error);
    if (round > 0) {
      // Re-read the objects that disagreed, in case they moved on meanwhile.
      await mapPool(mismatches, 10, async (m) => {
        const f = finals.find((x) => x.id === m.id);
        const res = await client.getWorkflow(m.id);
        if (f && res.status === 200) f.view = res.body;
      });
    }
    mismatches = [];
    for (const f of finals) {
      if (!f.view) continue;
      const row = index.rows.get(f.id);
      if (!row) mismatches.push({ id: f.id, object: f.view.status, index: "(missing)" });
      else if (row.status !== f.view.status) mismatches.push({ id: f.id, object: f.view.status, index: row.status });
    }
    if (mismatches.length > 0 && !swept && Date.now() - started > settleMs) {
      // What the index still gets wrong after the settle time is the sweep's to repair (an object killed
      // between its commit and its D1 write): run it once, as production's cron would have by now.
      swept = { before: mismatches.length, status: (await client.runCronSweep()).status };
      started = Date.now();
    } else if (mismatches.length === 0 || Date.now() - started > settleMs) break;
    await sleep(2_000);
  }
  const ours = new Set(finals.map((f) => f.id));
  const extra = [...index.rows.keys()].filter((id) => !ours.has(id));
  const settledMs = Date.now() - started;
  const detail =
    `${index.rows.size} rows, ${mismatches.length} mismatch(es), ${extra.length} unknown row(s)` +
    (mismatches.length === 0 && settledMs > 1_000 ? ` (settled after ${settledMs} ms)` : "") +
    (swept ? `; ${swept.before} stale after the settle time, the cron sweep run (answered ${swept.status}), ${mismatches.length} left` : "");
  return (mismatches.length || extra.length ? fail : pass)(name, detail, { mismatches: mismatches.slice(0, 30), extra: extra.slice(0, 10), settledMs, swept });
}

/** No alarm overdue by more than 5 s (sampled during the run and read for every workflow at the end). */
export async function checkAlarms(client, finals, sampler) {
  const name = `no alarm > ${OVERDUE_LIMIT_MS / 1000} s overdue`;
  const first = finals.find((f) => f.view);
  if (!first) return fail(name, "no workflow to ask about");
  let probe = await probeDevRoute(client, first.id);
  if (probe.available === null) probe = await sleep(1_000).then(() => probeDevRoute(client, first.id));
  if (probe.available === null) return fail(name, `GET /dev/workflows/{id} answered ${probe.status}`);
  if (!probe.available) return skipped(name, `skipped (no dev route: GET /dev/workflows/{id} answered ${probe.status})`);
  const overdue = [];
  const leftovers = [];
  const lost = [];
  let maxFinal = 0;
  await mapPool(finals, 10, async (f) => {
    const res = await client.getDevWorkflow(f.id);
    if (res.status !== 200 || !res.body) return;
    f.dev = res.body;
    const verdict = judgeAlarm(res.body, Date.now());
    maxFinal = Math.max(maxFinal, verdict.overdueMs);
    if (verdict.overdueMs > OVERDUE_LIMIT_MS) overdue.push({ id: f.id, status: res.body.status, alarmAt: res.body.alarmAt, overdueMs: verdict.overdueMs });
    if (verdict.leftoverAlarm) leftovers.push({ id: f.id, status: res.body.status, alarmAt: res.body.alarmAt });
    if (verdict.lost) lost.push({ id: f.id, status: res.body.status, nextDeadlineAt: res.body.nextDeadlineAt });
  });
  const s = sampler?.state ?? { samples: 0, maxOverdueMs: 0, worst: [], lost: [] };
  const failed = overdue.length + leftovers.length + lost.length + s.worst.length + s.lost.length > 0;
  const detail =
    `max overdue ${Math.max(s.maxOverdueMs, maxFinal)} ms over ${s.samples} samples during the run + ${finals.length} at the end; ` +
    `${overdue.length + s.worst.length} overdue, ${lost.length + s.lost.length} lost, ${leftovers.length} left on terminal workflows`;
  return (failed ? fail : pass)(name, detail, { overdueAtEnd: overdue.slice(0, 20), overdueDuringRun: s.worst, lostAtEnd: lost.slice(0, 20), lostDuringRun: s.lost, leftoverOnTerminal: leftovers.slice(0, 20) });
}

/**
 * At least `threshold` of the workflows the remote did not decline ended `completed`: a run in which
 * everything errored or compensated must not pass.
 */
export function checkProgress(finals, workflows, threshold) {
  const name = `progress ≥ ${Math.round(threshold * 100)} % completed`;
  const declined = new Set(workflows.filter((wf) => wf.declinedStep).map((wf) => wf.id));
  const eligible = finals.filter((f) => !declined.has(f.id));
  const completed = eligible.filter((f) => f.view?.status === "completed").length;
  if (eligible.length === 0) return fail(name, "no workflow was expected to complete");
  const rate = completed / eligible.length;
  const notCompleted = eligible.filter((f) => f.view?.status !== "completed").map((f) => ({ id: f.id, status: f.view?.status ?? null, error: f.view?.error?.message }));
  const others = {};
  for (const f of notCompleted) others[f.status ?? "not started"] = (others[f.status ?? "not started"] ?? 0) + 1;
  const otherText = Object.entries(others).map(([status, n]) => `${status} ${n}`).join(", ");
  const burst = eligible.filter((f) => f.kind === "burst");
  const burstText = burst.length ? `; burst ${burst.filter((f) => f.view?.status === "completed").length}/${burst.length}` : "";
  const detail = `${completed}/${eligible.length} = ${(rate * 100).toFixed(1)} %${burstText}${otherText ? `; others: ${otherText}` : ""} (${declined.size} declined by design left out)`;
  const started = notCompleted.filter((f) => f.status);
  return (rate >= threshold ? pass : fail)(name, detail, { rate, notCompleted: started.slice(0, 20), notStartedCount: notCompleted.length - started.length });
}

/** Server-side faults only count when the build under test has the FAULTS hook (static look at src/). */
export function checkServerFaults(features, serverFaults) {
  const name = "server faults injected (FAULTS)";
  const asked = Object.entries(serverFaults).filter(([, p]) => p > 0).map(([key]) => key);
  if (asked.length === 0) return pass(name, "none requested");
  if (!features.faultsVar) return skipped(name, "skipped (this build has no FAULTS hook; only remote faults were injected)");
  const unknown = asked.filter((key) => !features.faultKeys[key]);
  return unknown.length
    ? skipped(name, `skipped for ${unknown.join(", ")} (not in this build's src/); others passed to the Worker`)
    : pass(name, `${asked.join(", ")} passed to the Worker (DEV_HOOKS=true)`);
}

/** Whether a step's own timeouts or its definition's defaults set scheduleToStartMs. */
function asksScheduleToStart(definition, stepId) {
  const step = definition.steps.find((s) => s.id === stepId);
  return step?.timeouts?.scheduleToStartMs !== undefined || definition.defaults?.timeouts?.scheduleToStartMs !== undefined;
}

/**
 * A backlog in Shepherd's own queue never fails a workflow (docs/architecture.md, "Dispatch under load"): no attempt of a
 * step that did not set scheduleToStartMs timed out `schedule_to_start` (read from the view's attempts and
 * from the history's step_timed_out events, either is enough), and every burst workflow completed unless
 * the remote declined it by design. Causes of the other endings are named so a failure here points at
 * the queue or elsewhere.
 */
export function checkScheduleToStart(finals, workflows) {
  const name = "no workflow failed by a schedule-to-start it did not ask for";
  const byId = new Map(workflows.map((wf) => [wf.id, wf]));
  const unasked = [];
  for (const f of finals) {
    const wf = byId.get(f.id);
    if (!wf) continue;
    const seen = new Set();
    const note = (stepId, attempt, source) => {
      if (asksScheduleToStart(wf.payload.definition, stepId) || seen.has(`${stepId}#${attempt}`)) return;
      seen.add(`${stepId}#${attempt}`);
      unasked.push({ id: f.id, kind: wf.kind, stepId, attempt, source, workflowStatus: f.view?.status ?? null });
    };
    for (const step of f.view?.steps ?? []) {
      for (const a of step.attempts ?? []) if (a.error?.timeout === "schedule_to_start") note(step.id, a.n, "view");
    }
    for (const e of f.events) if (e.type === "step_timed_out" && e.data?.timeout === "schedule_to_start") note(e.stepId, e.attempt, "history");
  }
  const burst = finals.filter((f) => byId.get(f.id)?.kind === "burst");
  const unexpected = [];
  let completed = 0;
  let declinedCompensated = 0;
  let remoteExhausted = 0;
  // A workflow that never ended is the terminal check's failure; counting it here too would blame the queue twice.
  let notEnded = 0;
  for (const f of burst) {
    const wf = byId.get(f.id);
    const status = f.view?.status ?? null;
    if (!TERMINAL_STATUSES.has(status)) notEnded += 1;
    else if (status === "completed") completed += 1;
    else if (wf.declinedStep && status === "compensated") declinedCompensated += 1;
    else if (remoteUsedUpRetries(f.view, wf.payload.definition)) remoteExhausted += 1;
    else unexpected.push({ id: f.id, status, declinedStep: wf.declinedStep, cause: endingCause(f.view) });
  }
  const causes = {};
  for (const u of unexpected) causes[u.cause] = (causes[u.cause] ?? 0) + 1;
  const workflowsHit = new Set(unasked.map((u) => u.id)).size;
  const detail =
    `${unasked.length} unasked schedule_to_start timeout(s) in ${workflowsHit} of ${finals.length} workflows` +
    (burst.length
      ? `; burst ${completed + declinedCompensated + remoteExhausted}/${burst.length} as expected (${completed} completed, ${declinedCompensated} declined by design → compensated` +
          (remoteExhausted ? `, ${remoteExhausted} whose injected faults used up every attempt of a step` : "") +
          ")"
      : "; no burst") +
    (unexpected.length ? `; ${unexpected.length} other ending(s): ${Object.entries(causes).map(([c, n]) => `${c} ${n}`).join(", ")}` : "") +
    (notEnded ? `; ${notEnded} not ended (see the terminal check)` : "");
  return (unasked.length || unexpected.length ? fail : pass)(name, detail, { unasked: unasked.slice(0, 30), unexpectedBurstEndings: unexpected.slice(0, 30) });
}

/** A step's action attempts: compensation attempts (numbered on after them) are not the step's failure. */
const actionAttempts = (step) => (step.attempts ?? []).filter((a) => (a.kind ?? "action") === "action");

/**
 * The step whose action ended the workflow: its last action attempt failed or timed out. Not merely the first
 * step with an error: a step before it that succeeded can carry the error of a compensation attempt that
 * failed and was retried.
 */
function endingStep(view) {
  return view?.steps.find((s) => s.status !== "completed" && ["failed", "timed_out"].includes(actionAttempts(s).at(-1)?.status));
}

/**
 * Whether the step that ended the workflow failed because injected faults (the remote's, and the Worker's
 * that kill or silence an agent) used up its whole retry budget: every action attempt the policy allows was
 * made, and none of them ended for a queue cause (schedule-to-start or dead letters). The soak's random faults
 * make that a rare, legitimate ending (about 1 in 300 burst workflows at the soak's fault rates); it is the
 * faults' doing, not the backlog's.
 */
function remoteUsedUpRetries(view, definition) {
  const maxAttempts = definition.defaults?.retry?.maxAttempts;
  const ending = endingStep(view);
  if (!ending || maxAttempts === undefined) return false;
  const step = definition.steps.find((s) => s.id === ending.id);
  const budget = step?.retry?.maxAttempts ?? maxAttempts;
  const attempts = actionAttempts(ending);
  const queueCause = (a) => a.error?.timeout === "schedule_to_start" || /dead-lettered/.test(a.error?.message ?? "");
  return attempts.length >= budget && !attempts.some(queueCause);
}

/** Why a workflow did not complete, in a word or two: the timeout kind or HTTP status of the step that ended it. */
function endingCause(view) {
  const failedStep = endingStep(view) ?? view.steps.find((s) => s.error && (s.status === "failed" || s.status === "compensated" || s.status === "cancelled")) ?? view.steps.find((s) => s.error);
  const error = (failedStep && actionAttempts(failedStep).at(-1)?.error) ?? failedStep?.error ?? view.error;
  if (!error) return view.status;
  const why = error.timeout ?? (error.status ? `HTTP ${error.status}` : error.message?.slice(0, 40));
  return `${view.status}: ${why}`;
}

/** The workflows that use the language (lib/language.ts), each with its final reading and the driver's record. */
function languageCases(finals, workflows) {
  const byId = new Map(finals.map((f) => [f.id, f]));
  return workflows.filter((wf) => wf.language).map((wf) => ({ wf, f: byId.get(wf.id) })).filter(({ f }) => f?.started && f.view);
}

const ofStep = (events, type, stepId) => events.filter((e) => e.type === type && e.stepId === stepId);
/** The wait was reached: the sleep before it ended, or the wait itself left a trace. */
const reachedWait = (f) => ofStep(f.events, "step_succeeded", SLEEP_STEP).length > 0 || f.events.some((e) => e.stepId === WAIT_STEP);

/**
 * Every event a workflow's wait was reached for was consumed by that wait, once, with exactly the payload
 * sent: early ones (sent before the wait started, kept in the inbox) included. The answers agree with the
 * history (an answer `consumed: false` is an `event_received` with `buffered: true`); an event sent late (the
 * view showed the step `waiting`) is consumed at once; a second send with the same `id` (or a resend after
 * no answer) is answered 200 with the first answer and neither is received nor delivered again (one
 * `event_received`, one `event_consumed`); nothing consumed stays in the inbox.
 */
export function checkEvents(finals, workflows) {
  const name = "every event consumed once, with its payload";
  const violations = [];
  const tally = { workflows: 0, reached: 0, consumed: 0, early: 0, earlyBuffered: 0, late: 0, duplicates: 0, declinedBeforeWait: 0, notReached: [] };
  for (const { wf, f } of languageCases(finals, workflows)) {
    tally.workflows += 1;
    const plan = wf.language.event;
    const record = f.language ?? { sends: [] };
    const answers = answersByPhase(record);
    const v = (kind, extra = {}) => violations.push({ kind, id: f.id, timing: plan.timing, duplicate: plan.duplicate, ...extra });
    if (!reachedWait(f)) {
      if (wf.declinedBeforeWait) tally.declinedBeforeWait += 1;
      else tally.notReached.push({ id: f.id, status: f.view.status });
      continue;
    }
    tally.reached += 1;
    const first = answers.first;
    if (!first || (first.status !== 202 && first.status !== 200)) {
      v("event never accepted", { answer: first ? { status: first.status, body: first.body } : "never sent", waitStep: f.view.steps.find((s) => s.id === WAIT_STEP)?.status });
      continue;
    }
    const consumed = ofStep(f.events, "event_consumed", WAIT_STEP);
    const received = f.events.filter((e) => e.type === "event_received" && e.data?.id === plan.id);
    const step = f.view.steps.find((s) => s.id === WAIT_STEP);
    if (consumed.length !== 1) v("event_consumed by the wait ≠ 1", { count: consumed.length });
    else if (consumed[0].data?.id !== plan.id || consumed[0].data?.event !== plan.name) v("the wait consumed another event", { consumed: consumed[0].data });
    else tally.consumed += 1;
    if (received.length !== 1) v(received.length ? "event_received more than once for one id" : "no event_received for the id sent", { count: received.length });
    if (ofStep(f.events, "step_succeeded", WAIT_STEP).length !== 1) v("wait step did not succeed once", { stepStatus: step?.status, error: step?.error });
    if (ofStep(f.events, "wait_timed_out", WAIT_STEP).length) v("wait timed out although its event was sent");
    if (ofStep(f.events, "step_skipped", WAIT_STEP).length) v("wait skipped although its `when` was true", { data: ofStep(f.events, "step_skipped", WAIT_STEP)[0].data });
    if (!isDeepStrictEqual(step?.output, plan.payload)) v("wait step's output is not the payload sent", { output: step?.output ?? null });
    // The answer and the history tell the same story.
    const buffered = first.body?.consumed === false;
    if (typeof first.body?.consumed !== "boolean") v("event answer without `consumed`", { answer: first.body });
    else if (received[0] && received[0].data?.buffered !== buffered) v("answer and event_received disagree on buffering", { answer: first.body, received: received[0].data });
    if (plan.timing === "early") {
      tally.early += 1;
      if (buffered) tally.earlyBuffered += 1;
    } else {
      tally.late += 1;
      if (buffered) v("late event (the step was waiting) answered consumed: false", { answer: first.body, waitingSeenAt: record.waitingSeenAt });
    }
    if (plan.duplicate) {
      tally.duplicates += 1;
      const dup = answers.duplicate;
      if (!dup || dup.status !== 200 || !isDeepStrictEqual(dup.body, first.body)) {
        v("duplicate id not answered 200 with the first answer", { first: { status: first.status, body: first.body }, duplicate: dup ? { status: dup.status, body: dup.body } : "never sent" });
      }
    }
    const left = (f.view.pendingEvents ?? []).filter((e) => e.id === plan.id);
    if (left.length) v("consumed event still in the inbox", { pendingEvents: f.view.pendingEvents });
    if (!Array.isArray(f.view.pendingEvents)) v("view without pendingEvents");
  }
  const detail =
    `${tally.consumed}/${tally.reached} waits reached got their event once with its payload (of ${tally.workflows} workflows with a wait` +
    `${tally.declinedBeforeWait ? `, ${tally.declinedBeforeWait} declined before it by design` : ""}${tally.notReached.length ? `, ${tally.notReached.length} ended before it` : ""}); ` +
    `early ${tally.early} (${tally.earlyBuffered} buffered in the inbox), late ${tally.late}, sent twice ${tally.duplicates}; ${violations.length} violation(s)`;
  if (tally.workflows === 0) return fail(name, "no workflow used the language (the soak's share produced none)");
  return (violations.length ? fail : pass)(name, detail, { violations: violations.slice(0, 30), notReached: tally.notReached.slice(0, 10) });
}

/** How late a wake may be, not counting a restart it fell into (as the alarm check: 5 s). */
const WAKE_LATE_LIMIT_MS = OVERDUE_LIMIT_MS;
/** The planned wake of a `durationMs` sleep is step_sleeping's `until`: `at + durationMs`, give or take this much. */
const DURATION_SLACK_MS = { below: 50, above: 1_000 };

/**
 * Every sleep woke at its time, never before: its `step_succeeded` is not earlier than the planned wake
 * (an `until` sleep: the time the harness put in the input; a `durationMs` one: `step_sleeping`'s `until`,
 * which must be its start plus durationMs), its output `sleptUntil` is that time, and it woke at most 5 s
 * after it was due (the planned wake, or the sleep's start when that came later) unless the restart's outage
 * explains it.
 */
export function checkSleeps(finals, workflows, outage) {
  const name = "sleeps woke on time, never early";
  const violations = [];
  const lateness = [];
  let woke = 0;
  let notReached = 0;
  for (const { wf, f } of languageCases(finals, workflows)) {
    const plan = wf.language.sleep;
    const v = (kind, extra = {}) => violations.push({ kind, id: f.id, mode: plan.mode, ...extra });
    const sleeping = ofStep(f.events, "step_sleeping", SLEEP_STEP);
    const succeeded = ofStep(f.events, "step_succeeded", SLEEP_STEP);
    const step = f.view.steps.find((s) => s.id === SLEEP_STEP);
    if (succeeded.length === 0) {
      // Never woke: the first action never succeeded (the sleep never started), or a stuck sleep (the terminal check names it).
      if (sleeping.length && TERMINAL_STATUSES.has(f.view.status)) v("slept and never woke", { stepStatus: step?.status, workflowStatus: f.view.status });
      else notReached += 1;
      continue;
    }
    woke += 1;
    if (succeeded.length > 1) v("woke more than once", { count: succeeded.length });
    let planned;
    if (plan.mode === "until") {
      planned = f.language?.plannedWakeAt;
      if (sleeping[0] && sleeping[0].data?.until !== planned) v("step_sleeping's until is not the time in the input", { until: sleeping[0].data?.until, planned });
    } else {
      if (!sleeping[0]) {
        v("a durationMs sleep without step_sleeping");
        continue;
      }
      planned = sleeping[0].data?.until;
      const expected = sleeping[0].at + plan.durationMs;
      if (!(planned >= expected - DURATION_SLACK_MS.below && planned <= expected + DURATION_SLACK_MS.above)) v("step_sleeping's until is not its start + durationMs", { until: planned, sleepingAt: sleeping[0].at, durationMs: plan.durationMs });
    }
    if (typeof planned !== "number") {
      v("no planned wake time", { planned });
      continue;
    }
    const at = succeeded[0].at;
    if (at < planned) v("woke early", { earlyMs: planned - at, planned, wokeAt: at });
    if (step?.output?.sleptUntil !== planned) v("output sleptUntil is not the planned time", { output: step?.output ?? null, planned });
    // A sleep that started after its time (its action before it was late) is due at once; a wake due while
    // Shepherd was down counts from when it came back.
    const due = Math.max(planned, sleeping[0]?.at ?? planned);
    const inOutage = outage && due >= outage.from - 1_000 && due <= outage.to;
    const late = at - (inOutage ? Math.max(due, outage.to) : due);
    lateness.push(at - due);
    if (late > WAKE_LATE_LIMIT_MS) v("woke late", { lateMs: late, planned, wokeAt: at, inOutage: Boolean(inOutage) });
  }
  const total = woke + notReached;
  if (total === 0) return fail(name, "no workflow had a sleep");
  const l = summarize(lateness);
  const detail =
    `${woke} sleeps woke, ${violations.filter((x) => x.kind === "woke early").length} before their time` +
    `${notReached ? ` (${notReached} never started: the action before them did not succeed)` : ""}; ` +
    `woke after due p50 ${l.p50 ?? "–"} ms, max ${l.max ?? "–"} ms; ${violations.length} violation(s)`;
  return (violations.length ? fail : pass)(name, detail, { violations: violations.slice(0, 30), latenessMs: l });
}

/**
 * Sleeps and waits use no agent and no queue message: their view's `attempts` is empty, their history has
 * no attempt of theirs (scheduled, started, timed out, retried), and the remote never heard of them.
 */
export function checkNoQueueAttempts(finals, workflows, remoteStats) {
  const name = "no queue attempt for a sleep or a wait";
  const violations = [];
  const attemptTypes = new Set(["step_scheduled", "step_started", "step_retry_scheduled", "step_timed_out", "step_heartbeat_missed", "step_waiting"]);
  const stepIds = new Set([SLEEP_STEP, WAIT_STEP]);
  let steps = 0;
  for (const { f } of languageCases(finals, workflows)) {
    for (const step of f.view.steps) {
      if (!stepIds.has(step.id)) continue;
      steps += 1;
      if (!Array.isArray(step.attempts) || step.attempts.length) violations.push({ kind: "attempts in the view", id: f.id, stepId: step.id, attempts: step.attempts });
    }
    for (const e of f.events) if (stepIds.has(e.stepId) && attemptTypes.has(e.type)) violations.push({ kind: `${e.type} in the history`, id: f.id, stepId: e.stepId, attempt: e.attempt });
  }
  for (const k of Object.values(remoteStats.keys)) if (stepIds.has(k.stepId)) violations.push({ kind: "the remote was called for it", key: k.key });
  if (steps === 0) return fail(name, "no sleep or wait step to look at");
  return (violations.length ? fail : pass)(name, `${steps} sleep and wait steps, ${violations.length} with an attempt`, { violations: violations.slice(0, 30) });
}

/**
 * How late a fire may start its workflow: a start that broke off (the workflow's object reset mid-start, an
 * injected abortAfterPersist) is made again by the schedule's alarm a start lease (5 s) later, plus the alarm
 * check's 5 s. One the restart caught (due before Shepherd was back, started after the kill) counts from the
 * end of the outage.
 */
const SCHEDULE_START_LEASE_MS = 5_000;
const FIRE_LATE_LIMIT_MS = SCHEDULE_START_LEASE_MS + OVERDUE_LIMIT_MS;

/**
 * The cron schedule (lib/schedule.ts): every fire started exactly one workflow, `<id>:<fire time>`, and each
 * of those ended. Three sources: the fires the view recorded (`recent`, read every 15 s and merged; a reading
 * whose oldest fire is newer than the previous reading's newest leaves a gap), the object of every grid time
 * read by id, and the index listed by the definition's name. Every 10 s grid time after the creation and
 * before the last reading's `nextFireAt` must be recorded `started` with its workflow there (a `missed` or
 * `skipped` fire only when the restart's outage ended more than `catchupWindowMs` after it); a grid time
 * between that reading and the delete's answer may have fired (then the same holds); none after it; fire times
 * on the grid, never one recorded twice or changing its record; no listed workflow that is no fire's; every
 * workflow terminal and started ≤ 10 s after its fire (after the outage's end for a fire the restart caught).
 */
export function checkScheduleFires(run, finals, outage) {
  const name = "every schedule fire started exactly one workflow";
  if (!run) return skipped(name, "skipped (no schedule in this run)");
  if (run.missingApi) return skipped(name, `skipped (no schedules API: POST /v1/schedules answered ${Object.keys(run.create.statuses).join(", ")})`);
  if (run.createdAt === null) return fail(name, `the schedule was not created (answers ${JSON.stringify(run.create.statuses)})`, { create: run.create });
  const violations = [...run.recordConflicts];
  const v = (kind, extra = {}) => violations.push({ kind, ...extra });
  const byId = new Map(finals.map((f) => [f.id, f]));
  const fires = new Map(run.fires.map((f) => [f.at, f]));
  const objects = new Map(run.objects.map((o) => [o.at, o]));
  const decidedUntil = run.lastView?.nextFireAt ?? null;
  const deleteAt = run.delete?.answeredAt ?? null;
  if (!run.delete?.ok) v("delete not answered 200", { statuses: run.delete?.statuses });
  if (run.afterDelete !== 404) v("GET after the delete did not answer 404", { status: run.afterDelete });
  if (decidedUntil === null) return fail(name, "no reading of the schedule before its delete", { readings: run.readings.slice(-5), violations });

  // Readings that may have missed fires between them: `recent` (newest last, in the order fires were recorded,
  // which a start made again later can change) dropped the previous reading's last record before the next one.
  // What it dropped was recorded between the two readings: a fire from a catch-up window before the first on.
  const good = run.readings.filter((r) => r.status === 200);
  const gaps = [];
  for (let i = 1; i < good.length; i++) {
    const [prev, cur] = [good[i - 1], good[i]];
    if (prev.keys?.length && !cur.keys?.includes(prev.keys.at(-1))) gaps.push({ after: prev.readAt - run.catchupWindowMs - FIRE_EVERY_MS, before: cur.readAt });
  }
  const covered = (t) => !gaps.some((g) => t > g.after && t < g.before);
  const inOutage = (t) => outage !== null && t >= outage.from - 1_000 && t <= outage.to;

  const expected = gridTimes(run.createdAt, decidedUntil - 1);
  const racing = gridTimes(decidedUntil - 1, deleteAt ?? run.delete?.sentAt ?? decidedUntil);
  const afterDelete = gridTimes(deleteAt ?? run.delete?.sentAt ?? decidedUntil, run.followedUntil ?? 0);
  const started = [];
  const uncovered = [];
  const explainedMisses = [];

  /** One grid time: its record and its workflow agree, and a started one's workflow is there. */
  const judge = (t, mustHaveFired) => {
    const fire = fires.get(t);
    const object = objects.get(t);
    const id = workflowIdOfFire(t);
    const exists = object?.status === 200;
    if (!fire) {
      if (exists && covered(t)) v("a workflow whose fire is not recorded", { id, at: t });
      else if (exists) uncovered.push(t);
      else if (mustHaveFired) v("fire lost: no record and no workflow", { at: t, objectStatus: object?.status ?? null });
      if (exists) started.push(t);
      return;
    }
    if (fire.outcome === "started") {
      if (fire.workflowId !== id) v("a started fire's workflowId is not <schedule>:<fire time>", { at: t, workflowId: fire.workflowId });
      if (!exists) v("a fire recorded started without its workflow", { at: t, id, objectStatus: object?.status ?? null });
      else started.push(t);
    } else if ((fire.outcome === "missed" || fire.outcome === "skipped_overlap") && inOutage(t) && outage.to - t > run.catchupWindowMs) {
      explainedMisses.push(t);
      if (exists) v(`a fire recorded ${fire.outcome} but its workflow exists`, { id, at: t });
    } else {
      v(`fire recorded ${fire.outcome}`, { at: t, id, error: fire.error, inOutage: inOutage(t), objectExists: exists });
    }
  };
  for (const t of expected) judge(t, true);
  for (const t of racing) judge(t, false);
  for (const t of afterDelete) {
    if (objects.get(t)?.status === 200 || fires.has(t)) v("fired after the delete", { at: t, id: workflowIdOfFire(t), deletedAt: deleteAt });
  }
  const window = new Set([...expected, ...racing, ...afterDelete]);
  for (const fire of run.fires) {
    if (fire.at % FIRE_EVERY_MS !== 0) v("fire time off the 10 s grid", { at: fire.at, outcome: fire.outcome, workflowId: fire.workflowId });
    else if (!window.has(fire.at)) v("fire outside the schedule's life", { at: fire.at, createdAt: run.createdAt, deletedAt: deleteAt });
  }

  // The index by the definition's name: nothing but the fires' workflows, each once.
  const listed = run.listed?.rows ?? [];
  if (run.listed?.error) v("listing by name failed", { error: run.listed.error });
  const listedIds = new Set();
  for (const row of listed) {
    if (listedIds.has(row.id)) v("a workflow listed twice by name", { id: row.id });
    listedIds.add(row.id);
    const t = fireAtOf(row.id);
    if (t === null) v("a workflow of the schedule's definition whose id is no fire's", { id: row.id, status: row.status });
    else if (!started.includes(t)) v("a listed workflow of a fire that did not start", { id: row.id, at: t, record: fires.get(t) ?? null });
  }

  // Each started workflow: the schedule's definition, ended, and started on time.
  const lags = [];
  const catchUps = [];
  let terminal = 0;
  for (const t of started) {
    const id = workflowIdOfFire(t);
    const f = byId.get(id);
    const status = f?.view?.status ?? null;
    if (TERMINAL_STATUSES.has(status)) terminal += 1;
    else v("a fire's workflow did not reach a terminal status", { id, status });
    if (f?.view && f.view.name !== SCHEDULE_DEFINITION_NAME) v("a fire's workflow runs another definition", { id, name: f.view.name });
    const createdAt = f?.view?.createdAt ?? objects.get(t)?.createdAt;
    if (typeof createdAt !== "number") continue;
    if (createdAt < t) v("a workflow started before its fire time", { id, createdAt });
    // Caught by the restart: due before Shepherd was back, started after the kill (a start the kill interrupted
    // is made by the schedule's alarm when it is back, a start lease later).
    const caught = outage !== null && t <= outage.to && createdAt > outage.from;
    const late = createdAt - (caught ? Math.max(t, outage.to) : t);
    if (caught) catchUps.push({ at: t, id, lagMs: createdAt - t, afterRestartMs: createdAt - outage.to });
    else lags.push(createdAt - t);
    if (late > FIRE_LATE_LIMIT_MS) v("a fire started its workflow late", { id, at: t, lateMs: late, inOutage: caught });
  }

  const l = summarize(lags);
  const outcomes = {};
  for (const fire of run.fires) outcomes[fire.outcome] = (outcomes[fire.outcome] ?? 0) + 1;
  const expectedStarted = expected.filter((t) => started.includes(t)).length;
  const racedStarted = racing.filter((t) => started.includes(t)).length;
  const detail =
    `${expectedStarted}/${expected.length} fires (every 10 s from creation to the last reading) started one workflow each` +
    `${racing.length ? `, ${racedStarted}/${racing.length} racing the delete` : ""}${explainedMisses.length ? `, ${explainedMisses.length} missed in the outage` : ""}; ` +
    `${terminal}/${started.length} terminal; ${catchUps.length} caught up after the restart${catchUps.length ? ` (${catchUps.map((c) => `+${c.lagMs} ms`).join(", ")})` : ""}; ` +
    `fire → start p50 ${l.p50 ?? "–"} ms, max ${l.max ?? "–"} ms; ${good.length} readings merged, ${gaps.length} gap(s); ` +
    `${listed.length} listed by name; ${afterDelete.length} grid time(s) after the delete without a fire, GET after it ${run.afterDelete}; ${violations.length} violation(s)`;
  if (expected.length === 0) return fail(name, `no fire was due in the schedule's life (${detail})`, { violations });
  return (violations.length ? fail : pass)(name, detail, {
    violations: violations.slice(0, 30),
    gaps,
    uncoveredButFound: uncovered,
    catchUps,
    fireToStartMs: l,
    outcomes,
    expected: expected.length,
    racing: racing.length,
  });
}
