// What the supervision scenarios (lib/supervision.ts) left behind, read from each workflow's final view and
// history and from what the remotes saw. supervision-checks.ts judges these facts; the report shows them
// (`supervision` in latest.json, three rows in the table).
import { isDeepStrictEqual } from "node:util";
import { BATCH_RETRY } from "./breaker.ts";
import { LOST_STEP } from "./lost-answers.ts";
import { STALL_STEP } from "./stall.ts";

const ofStep = (events, type, stepId) => events.filter((e) => e.type === type && e.stepId === stepId);

/** Everything the checks and the report need: {stalls, strayStalls, lostAnswers, breaker}. */
export function supervisionFacts({ plan, run, finals, remoteStats, secondHostStats }) {
  const byId = new Map(finals.map((f) => [f.id, f]));
  const results = new Map(run.results.map((r) => [r.id, r]));
  const context = (wf, stepId) => {
    const f = byId.get(wf.id);
    const started = results.get(wf.id);
    return { f, events: f?.events ?? [], step: f?.view?.steps.find((s) => s.id === stepId), record: remoteStats.keys[`${wf.id}:${stepId}`], startError: started?.started ? null : (started?.startError ?? null) };
  };
  return {
    stalls: plan.stalls.map((wf) => stallCase(wf, context(wf, STALL_STEP))),
    strayStalls: strayStalls(finals, new Set(plan.stalls.map((wf) => wf.id))),
    lostAnswers: plan.lostAnswers.map((wf) => lostAnswerCase(wf, context(wf, LOST_STEP), remoteStats.verifies ?? {})),
    breaker: breakerCase(run.breaker, plan, byId, secondHostStats),
  };
}

/** A stalling workflow: the attempt the remote kept stuck, how it ended, and the stalls in its history. */
function stallCase(wf, { f, events, step, record, startError }) {
  const stuck = record?.jobs.find((job) => job.stuck) ?? null;
  const stalls = ofStep(events, "step_stalled", STALL_STEP).map((e) => ({ attempt: e.attempt, at: e.at, ...e.data }));
  return {
    id: wf.id,
    status: f?.view?.status ?? null,
    startError,
    stuckAttempt: stuck?.attempt ?? null,
    firstAttempt: step?.attempts[0]?.n ?? null,
    stuckTimeout: step?.attempts.find((a) => a.n === stuck?.attempt)?.error?.timeout ?? null,
    stuckHeartbeatsAccepted: stuck?.heartbeats.filter((h) => h.status === 200).length ?? 0,
    stuckEndedBy: stuck?.ended?.by ?? null,
    stall: stalls.find((s) => s.attempt === stuck?.attempt) ?? null,
    otherStalls: stalls.filter((s) => s.attempt !== stuck?.attempt),
    attempts: step?.attempts.length ?? 0,
    applied: record?.applied ?? 0,
    outputIsEffect: record?.appliedBody != null && isDeepStrictEqual(step?.output, record.appliedBody),
  };
}

/** Stalls in workflows not meant to stall: a step_stalled event, or an attempt whose error says `stalled`. */
function strayStalls(finals, stallIds) {
  const stray = [];
  for (const f of finals) {
    if (stallIds.has(f.id)) continue;
    for (const e of f.events) if (e.type === "step_stalled") stray.push({ id: f.id, stepId: e.stepId, attempt: e.attempt, via: "history" });
    for (const step of f.view?.steps ?? []) {
      for (const a of step.attempts ?? []) if (a.error?.timeout === "stalled") stray.push({ id: f.id, stepId: step.id, attempt: a.n, via: "view" });
    }
  }
  return stray;
}

/** A lost-answer workflow: how the remote lost its answer, what it was asked since, and what the engine recorded. */
function lostAnswerCase(wf, { f, events, step, record, startError }, verifies) {
  const key = `${wf.id}:${LOST_STEP}`;
  const calls = verifies[key] ?? [];
  return {
    id: wf.id,
    status: f?.view?.status ?? null,
    startError,
    mode: record?.lost?.mode ?? null,
    lostAttempt: record?.lost?.attempt ?? null,
    actionRequests: record?.requests ?? 0,
    applied: record?.applied ?? 0,
    replays: record?.replays ?? 0,
    verifies: calls.length,
    verifiesFound: calls.filter((c) => c.found).length,
    verifiesWithOtherKey: calls.filter((c) => c.keyHeader !== key).length,
    verifiedAttempts: ofStep(events, "step_verified", LOST_STEP).map((e) => e.attempt),
    attempts: step?.attempts.length ?? 0,
    outputIsEffect: record?.appliedBody != null && isDeepStrictEqual(step?.output, record.appliedBody),
  };
}

/**
 * The host that went down: its breaker's events in every history, the steps of the batch with the attempts they
 * used (parked attempts are given back), the listing's samples, and the main remote's breaker beside it.
 */
function breakerCase(run, plan, byId, secondHostStats) {
  if (!run || run.skipped) return { skipped: run?.skipped ?? "not run" };
  if (run.outage.from === null) return { skipped: `no call of the batch reached ${run.host}` };
  const { host, mainHost, outage } = run;
  const finals = [...byId.values()];
  const events = (type, h) => finals.flatMap((f) => f.events.filter((e) => e.type === type && e.data?.host === h).map((e) => ({ id: f.id, stepId: e.stepId, attempt: e.attempt, at: e.at, data: e.data })));
  const opened = events("circuit_opened", host);
  const parkings = events("step_parked", host);
  const closed = events("circuit_closed", host);
  const batch = plan.batch.map((wf) => batchCase(wf, byId.get(wf.id)));
  const readings = (h) => run.targets.samples.filter((s) => s.rows[h]).map((s) => ({ at: s.at, ...s.rows[h] }));
  const hostReadings = readings(host);
  const mainReadings = readings(mainHost);
  const since = (at) => (at === undefined ? null : at - outage.from);
  return {
    host,
    mainHost,
    outage: { ...outage, downAfterStartMs: outage.from - outage.armedAt },
    targetsApi: run.targets.available === false ? `GET /v1/targets answered ${run.targets.missingStatus}` : null,
    maxAttempts: BATCH_RETRY.maxAttempts,
    batch,
    maxUsed: Math.max(0, ...batch.flatMap((b) => b.steps.map((s) => s.used))),
    opened: opened.sort((x, y) => x.at - y.at).map((e) => ({ id: e.id, stepId: e.stepId, afterDownMs: since(e.at), failures: e.data.failures, openForMs: e.data.openUntil - e.at })),
    sampledOpenAfterMs: since(hostReadings.find((r) => r.state !== "closed")?.at),
    parkings: parkings.length,
    stepsParked: new Set(parkings.map((p) => `${p.id}|${p.stepId}`)).size,
    maxParkedListed: Math.max(0, ...hostReadings.map((r) => r.parked ?? 0)),
    // circuit_closed is a parked step's release: probes during the outage, then everyone after the last opening.
    releases: releasesAround(closed, opened, outage),
    answeredDown: Object.values(secondHostStats.keys).reduce((n, k) => n + (k.faults.outage503 ?? 0), 0),
    mainHostOpened: events("circuit_opened", mainHost).map((e) => ({ id: e.id, stepId: e.stepId, at: e.at, failures: e.data.failures })),
    mainHostStates: [...new Set(mainReadings.map((r) => r.state))],
    samples: run.targets.samples.length,
    final: run.targets.final,
  };
}

/** A workflow of the batch: per step, the attempts it used (parked ones are given back) and its trail of attempts. */
function batchCase(wf, f) {
  const steps = (f?.view?.steps ?? []).map((s) => {
    const parked = new Set(ofStep(f.events, "step_parked", s.id).map((e) => e.attempt));
    const actions = s.attempts.filter((a) => (a.kind ?? "action") === "action");
    // Each attempt as "n:status(why)", so a step that used many can be read without its history.
    const label = (a) => (parked.has(a.n) ? `${a.n}:parked` : `${a.n}:${a.status}${a.error ? `(${a.error.timeout ?? a.error.status ?? a.error.message?.slice(0, 40)})` : ""}`);
    return { id: s.id, status: s.status, used: actions.filter((a) => !parked.has(a.n)).length, parked: parked.size, trail: actions.map(label).join(" ") };
  });
  return { id: wf.id, status: f?.view?.status ?? null, steps };
}

/** Releases before the last opening were probes that failed; the rest came with the close (times after the host was back). */
function releasesAround(closed, opened, outage) {
  const lastOpenedAt = Math.max(-Infinity, ...opened.map((e) => e.at));
  const after = closed.filter((e) => e.at > lastOpenedAt).map((e) => e.at - outage.to);
  return {
    count: closed.length,
    failedProbes: closed.length - after.length,
    firstAfterUpMs: after.length ? Math.min(...after) : null,
    lastAfterUpMs: after.length ? Math.max(...after) : null,
  };
}
