// The report's sections beyond the checks and measurements: the workflow language's workflows, the cron
// schedule, the burst, and the supervision scenarios, each as latest.json keeps it (report.ts prints them).
import { measure } from "./metrics.ts";
import { SLEEP_STEP, WAIT_STEP } from "./language.ts";

/** The language workflows: their plans, what was sent and answered, how each sleep and wait went. */
export function languageReport(workflows, finals, outage) {
  const byId = new Map(finals.map((f) => [f.id, f]));
  const cases = workflows.filter((wf) => wf.language);
  const list = cases.map((wf) => {
    const f = byId.get(wf.id);
    const find = (type, stepId) => f?.events.find((e) => e.type === type && e.stepId === stepId);
    const at = (type, stepId) => find(type, stepId)?.at ?? null;
    return {
      id: wf.id,
      status: f?.view?.status ?? null,
      sleep: wf.language.sleep,
      // until: the time the harness put in the input; durationMs: the one step_sleeping names.
      plannedWakeAt: f?.language?.plannedWakeAt ?? find("step_sleeping", SLEEP_STEP)?.data?.until ?? null,
      sleepingAt: at("step_sleeping", SLEEP_STEP),
      wokeAt: at("step_succeeded", SLEEP_STEP),
      waitingAt: at("step_waiting_for_event", WAIT_STEP),
      consumedAt: at("event_consumed", WAIT_STEP),
      event: { name: wf.language.event.name, id: wf.language.event.id, timing: wf.language.event.timing, duplicate: wf.language.event.duplicate },
      waitingSeenAt: f?.language?.waitingSeenAt ?? null,
      sends: (f?.language?.sends ?? []).map((s) => ({ phase: s.phase, at: s.at, status: s.status, body: s.body, ...(s.error ? { error: s.error } : {}) })),
    };
  });
  // What the restart could have lost: sleeps and waits in progress at the kill, early events still in the inbox
  // (begun before the kill, ended after it: only a running Shepherd writes the end, so after it was back).
  const across = (from, to) => outage !== null && from !== null && from < outage.from && (to ?? Infinity) > outage.from;
  const acrossRestart = {
    sleeps: list.filter((l) => across(l.sleepingAt, l.wokeAt)).length,
    waits: list.filter((l) => across(l.waitingAt, l.consumedAt)).length,
    bufferedEvents: list.filter((l) => across(l.sends.find((s) => s.phase === "first" && s.body?.consumed === false)?.at ?? null, l.consumedAt)).length,
  };
  const sendAnswers = {};
  for (const l of list) for (const s of l.sends) sendAnswers[`${s.phase} ${s.status}`] = (sendAnswers[`${s.phase} ${s.status}`] ?? 0) + 1;
  return {
    workflows: list.length,
    sleeps: { duration: list.filter((l) => l.sleep.mode === "duration").length, until: list.filter((l) => l.sleep.mode === "until").length },
    events: { early: list.filter((l) => l.event.timing === "early").length, late: list.filter((l) => l.event.timing === "late").length, twice: list.filter((l) => l.event.duplicate).length },
    sendAnswers,
    acrossRestart,
    list,
  };
}

/** The schedule for the report: its spec, every reading, every fire with its workflow's ending, the delete. */
export function scheduleReport(run, finals, outage) {
  const byId = new Map(finals.map((f) => [f.id, f]));
  const objects = new Map(run.objects.map((o) => [o.at, o]));
  const fireTimes = [...new Set([...run.fires.map((f) => f.at), ...run.objects.filter((o) => o.status === 200).map((o) => o.at)])].sort((a, b) => a - b);
  return {
    id: run.id,
    cron: run.cron,
    overlap: run.overlap,
    catchupWindowMs: run.catchupWindowMs,
    missingApi: run.missingApi,
    create: { tries: run.create.tries, statuses: run.create.statuses, error: run.create.error },
    createdAt: run.createdAt,
    lastReading: run.lastView ?? null,
    delete: run.delete ?? null,
    afterDelete: run.afterDelete ?? null,
    followedUntil: run.followedUntil ?? null,
    readings: run.readings,
    listed: run.listed ? { count: run.listed.rows.length, error: run.listed.error } : null,
    fires: fireTimes.map((at) => {
      const fire = run.fires.find((f) => f.at === at);
      const view = byId.get(`${run.id}:${at}`)?.view;
      return {
        at,
        iso: new Date(at).toISOString(),
        outcome: fire?.outcome ?? null,
        workflowId: fire?.workflowId ?? null,
        error: fire?.error,
        readings: fire?.seenIn.length ?? 0,
        object: objects.get(at)?.status ?? null,
        status: view?.status ?? null,
        startLagMs: view ? view.createdAt - at : null,
        // Due before Shepherd was back and started after the kill: the restart caught it.
        inOutage: outage !== null && at <= outage.to && (view ? view.createdAt > outage.from : at >= outage.from),
      };
    }),
  };
}

export function sumCounts(tables) {
  const sum = {};
  for (const table of tables) for (const [key, n] of Object.entries(table)) sum[key] = (sum[key] ?? 0) + n;
  return sum;
}

/** The burst's figures for the table: what the front door did with it, how it ended, what it cost per step. */
export function burstReport(summary, burstFinals, burstWorkflows, outage) {
  const outcomes = {};
  for (const f of burstFinals) {
    const status = f.view?.status ?? (f.started ? "unreadable" : "not started");
    outcomes[status] = (outcomes[status] ?? 0) + 1;
  }
  const m = measure(burstFinals, outage);
  return {
    ...summary,
    outcomes,
    declinedByDesign: burstWorkflows.filter((wf) => wf.declinedStep).length,
    actionAttemptsPerStep: m.actionAttemptsPerStep,
    actionAttemptsHistogram: m.actionAttemptsHistogram,
    workflowDurationMs: m.workflowDurationMs,
    timeouts: m.detectionLatencyByTimeoutMs,
  };
}
