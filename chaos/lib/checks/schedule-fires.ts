// The cron schedule (lib/schedule.ts): every fire started exactly one workflow, `<id>:<fire time>`, and each of
// those ended. Three sources agree: the fires the view recorded (`recent`, read every 15 s and merged), the
// object of every grid time read by id, and the index listed by the definition's name.
import { isTerminal } from "../client.ts";
import type { Final } from "../finals.ts";
import { distribution } from "../metrics.ts";
import type { Outage } from "../restart.ts";
import type { ScheduleResult } from "../schedule-end.ts";
import type { FireSeen, ObjectReading } from "../schedule-readings.ts";
import { fireAtOf, FIRE_EVERY_MS, gridTimes, SCHEDULE_DEFINITION_NAME, workflowIdOfFire } from "../schedule.ts";
import { OVERDUE_LIMIT_MS } from "../alarms.ts";
import { fail, pass, skipped, tally } from "./check.ts";
import type { Check, Report, Violation } from "./check.ts";

/**
 * How late a fire may start its workflow: a start that broke off (the workflow's object reset mid-start, an
 * injected abortAfterPersist) is made again by the schedule's alarm a start lease (5 s) later, plus the alarm
 * check's 5 s. One the restart caught (due before Shepherd was back, started after the kill) counts from the
 * end of the outage.
 */
const SCHEDULE_START_LEASE_MS = 5_000;
const FIRE_LATE_LIMIT_MS = SCHEDULE_START_LEASE_MS + OVERDUE_LIMIT_MS;

/** A stretch between two readings in which `recent` may have dropped fires unseen. */
interface Gap {
  after: number;
  before: number;
}

/** The grid times of the schedule's life: due before the last reading, racing the delete, after it. */
interface Windows {
  expected: number[];
  racing: number[];
  afterDelete: number[];
}

/** What the grid times showed: the fires that started their workflow, and the ones explained otherwise. */
interface GridSeen {
  started: number[];
  uncovered: number[];
  explainedMisses: number[];
}

/** How the fires' workflows started and ended. */
interface StartsSeen {
  lags: number[];
  catchUps: { at: number; id: string; lagMs: number; afterRestartMs: number }[];
  terminal: number;
}

interface Fires {
  run: ScheduleResult;
  fires: Map<number, FireSeen>;
  objects: Map<number, ObjectReading>;
  outage: Outage | null;
  gaps: Gap[];
  v: Report;
}

/**
 * Every 10 s grid time after the creation and before the last reading's `nextFireAt` must be recorded `started`
 * with its workflow there (a `missed` or `skipped` fire only when the restart's outage ended more than
 * `catchupWindowMs` after it); a grid time between that reading and the delete's answer may have fired (then the
 * same holds); none after it; fire times on the grid, never one recorded twice or changing its record; no listed
 * workflow that is no fire's; every workflow terminal and started ≤ 10 s after its fire (after the outage's end
 * for a fire the restart caught).
 */
export function checkScheduleFires(run: ScheduleResult | null, finals: readonly Final[], outage: Outage | null): Check {
  const name = "every schedule fire started exactly one workflow";
  if (!run) return skipped(name, "skipped (no schedule in this run)");
  if (run.missingApi) return skipped(name, `skipped (no schedules API: POST /v1/schedules answered ${Object.keys(run.create.statuses).join(", ")})`);
  if (run.createdAt === null) return fail(name, `the schedule was not created (answers ${JSON.stringify(run.create.statuses)})`, { create: run.create });
  const violations: Violation[] = [...run.recordConflicts];
  const v: Report = (kind, extra = {}) => violations.push({ kind, ...extra });
  const decidedUntil = run.lastView?.nextFireAt ?? null;
  if (!run.delete?.ok) v("delete not answered 200", { statuses: run.delete?.statuses });
  if (run.afterDelete !== 404) v("GET after the delete did not answer 404", { status: run.afterDelete });
  if (decidedUntil === null) return fail(name, "no reading of the schedule before its delete", { readings: run.readings.slice(-5), violations });
  const ctx: Fires = { run, fires: new Map(run.fires.map((f) => [f.at, f])), objects: new Map(run.objects.map((o) => [o.at, o])), outage, gaps: readingGaps(run), v };
  const windows = fireWindows(run.createdAt, decidedUntil, run);
  const grid = judgeGrid(ctx, windows);
  judgeFireTimes(ctx, windows);
  judgeListing(ctx, grid.started);
  const starts = judgeStarts(ctx, grid.started, new Map(finals.map((f) => [f.id, f])));
  return verdict(name, ctx, windows, grid, starts, violations);
}

/**
 * Readings that may have missed fires between them: `recent` (newest last, in the order fires were recorded,
 * which a start made again later can change) dropped the previous reading's last record before the next one.
 * What it dropped was recorded between the two readings: a fire from a catch-up window before the first on.
 */
function readingGaps(run: ScheduleResult): Gap[] {
  const good = run.readings.filter((r) => r.status === 200);
  const gaps: Gap[] = [];
  good.forEach((cur, i) => {
    const prev = good[i - 1];
    const last = prev?.keys?.at(-1);
    if (prev && last !== undefined && !cur.keys?.includes(last)) gaps.push({ after: prev.readAt - run.catchupWindowMs - FIRE_EVERY_MS, before: cur.readAt });
  });
  return gaps;
}

function fireWindows(createdAt: number, decidedUntil: number, run: ScheduleResult): Windows {
  const deleteAt = run.delete?.answeredAt ?? null;
  return {
    expected: gridTimes(createdAt, decidedUntil - 1),
    racing: gridTimes(decidedUntil - 1, deleteAt ?? run.delete?.sentAt ?? decidedUntil),
    afterDelete: gridTimes(deleteAt ?? run.delete?.sentAt ?? decidedUntil, run.followedUntil ?? 0),
  };
}

const inOutageOf = (outage: Outage | null, t: number): boolean => outage !== null && t >= outage.from - 1_000 && t <= outage.to;

/** Each grid time of the schedule's life: its record and its workflow agree, and none came after the delete. */
function judgeGrid(ctx: Fires, { expected, racing, afterDelete }: Windows): GridSeen {
  const seen: GridSeen = { started: [], uncovered: [], explainedMisses: [] };
  for (const t of expected) judgeGridTime(ctx, seen, t, true);
  for (const t of racing) judgeGridTime(ctx, seen, t, false);
  for (const t of afterDelete) {
    if (ctx.objects.get(t)?.status === 200 || ctx.fires.has(t)) ctx.v("fired after the delete", { at: t, id: workflowIdOfFire(t), deletedAt: ctx.run.delete?.answeredAt ?? null });
  }
  return seen;
}

/** One grid time: its record and its workflow agree, and a started one's workflow is there. */
function judgeGridTime({ fires, objects, outage, gaps, run, v }: Fires, seen: GridSeen, t: number, mustHaveFired: boolean): void {
  const fire = fires.get(t);
  const object = objects.get(t);
  const id = workflowIdOfFire(t);
  const exists = object?.status === 200;
  const inOutage = inOutageOf(outage, t);
  if (!fire) {
    const covered = !gaps.some((g) => t > g.after && t < g.before);
    if (exists && covered) v("a workflow whose fire is not recorded", { id, at: t });
    else if (exists) seen.uncovered.push(t);
    else if (mustHaveFired) v("fire lost: no record and no workflow", { at: t, objectStatus: object?.status ?? null });
    if (exists) seen.started.push(t);
    return;
  }
  if (fire.outcome === "started") {
    if (fire.workflowId !== id) v("a started fire's workflowId is not <schedule>:<fire time>", { at: t, workflowId: fire.workflowId });
    if (!exists) v("a fire recorded started without its workflow", { at: t, id, objectStatus: object?.status ?? null });
    else seen.started.push(t);
  } else if ((fire.outcome === "missed" || fire.outcome === "skipped_overlap") && inOutage && outage !== null && outage.to - t > run.catchupWindowMs) {
    seen.explainedMisses.push(t);
    if (exists) v(`a fire recorded ${fire.outcome} but its workflow exists`, { id, at: t });
  } else {
    v(`fire recorded ${fire.outcome}`, { at: t, id, error: fire.error, inOutage, objectExists: exists });
  }
}

/** Every recorded fire time is on the 10 s grid and inside the schedule's life. */
function judgeFireTimes({ run, v }: Fires, { expected, racing, afterDelete }: Windows): void {
  const window = new Set([...expected, ...racing, ...afterDelete]);
  for (const fire of run.fires) {
    if (fire.at % FIRE_EVERY_MS !== 0) v("fire time off the 10 s grid", { at: fire.at, outcome: fire.outcome, workflowId: fire.workflowId });
    else if (!window.has(fire.at)) v("fire outside the schedule's life", { at: fire.at, createdAt: run.createdAt, deletedAt: run.delete?.answeredAt ?? null });
  }
}

/** The index by the definition's name: nothing but the fires' workflows, each once. */
function judgeListing({ run, fires, v }: Fires, started: readonly number[]): void {
  if (run.listed?.error) v("listing by name failed", { error: run.listed.error });
  const listedIds = new Set<string>();
  for (const row of run.listed?.rows ?? []) {
    if (listedIds.has(row.id)) v("a workflow listed twice by name", { id: row.id });
    listedIds.add(row.id);
    const t = fireAtOf(row.id);
    if (t === null) v("a workflow of the schedule's definition whose id is no fire's", { id: row.id, status: row.status });
    else if (!started.includes(t)) v("a listed workflow of a fire that did not start", { id: row.id, at: t, record: fires.get(t) ?? null });
  }
}

/** Each started workflow: the schedule's definition, ended, and started on time. */
function judgeStarts({ objects, outage, v }: Fires, started: readonly number[], byId: Map<string, Final>): StartsSeen {
  const seen: StartsSeen = { lags: [], catchUps: [], terminal: 0 };
  for (const t of started) {
    const id = workflowIdOfFire(t);
    const view = byId.get(id)?.view;
    if (isTerminal(view?.status)) seen.terminal += 1;
    else v("a fire's workflow did not reach a terminal status", { id, status: view?.status ?? null });
    if (view && view.name !== SCHEDULE_DEFINITION_NAME) v("a fire's workflow runs another definition", { id, name: view.name });
    const createdAt = view?.createdAt ?? objects.get(t)?.createdAt;
    if (typeof createdAt !== "number") continue;
    if (createdAt < t) v("a workflow started before its fire time", { id, createdAt });
    // Caught by the restart: due before Shepherd was back, started after the kill (a start the kill interrupted
    // is made by the schedule's alarm when it is back, a start lease later).
    const caught = outage !== null && t <= outage.to && createdAt > outage.from;
    const late = createdAt - (caught ? Math.max(t, outage.to) : t);
    if (caught) seen.catchUps.push({ at: t, id, lagMs: createdAt - t, afterRestartMs: createdAt - outage.to });
    else seen.lags.push(createdAt - t);
    if (late > FIRE_LATE_LIMIT_MS) v("a fire started its workflow late", { id, at: t, lateMs: late, inOutage: caught });
  }
  return seen;
}

function verdict(name: string, { run, gaps }: Fires, windows: Windows, grid: GridSeen, starts: StartsSeen, violations: Violation[]): Check {
  const { expected, racing, afterDelete } = windows;
  const l = distribution(starts.lags);
  const expectedStarted = expected.filter((t) => grid.started.includes(t)).length;
  const racedStarted = racing.filter((t) => grid.started.includes(t)).length;
  const { catchUps } = starts;
  const detail =
    `${expectedStarted}/${expected.length} fires (every 10 s from creation to the last reading) started one workflow each` +
    `${racing.length ? `, ${racedStarted}/${racing.length} racing the delete` : ""}${grid.explainedMisses.length ? `, ${grid.explainedMisses.length} missed in the outage` : ""}; ` +
    `${starts.terminal}/${grid.started.length} terminal; ${catchUps.length} caught up after the restart${catchUps.length ? ` (${catchUps.map((c) => `+${c.lagMs} ms`).join(", ")})` : ""}; ` +
    `fire → start p50 ${l.p50 ?? "–"} ms, max ${l.max ?? "–"} ms; ${run.readings.filter((r) => r.status === 200).length} readings merged, ${gaps.length} gap(s); ` +
    `${run.listed?.rows.length ?? 0} listed by name; ${afterDelete.length} grid time(s) after the delete without a fire, GET after it ${run.afterDelete}; ${violations.length} violation(s)`;
  if (expected.length === 0) return fail(name, `no fire was due in the schedule's life (${detail})`, { violations });
  return (violations.length ? fail : pass)(name, detail, {
    violations: violations.slice(0, 30),
    gaps,
    uncoveredButFound: grid.uncovered,
    catchUps,
    fireToStartMs: l,
    outcomes: tally(run.fires.map((fire) => fire.outcome)),
    expected: expected.length,
    racing: racing.length,
  });
}
