// Reading the cron schedule (schedule.ts has its spec) while it runs and at its end: its view, whose `recent`
// keeps only the last 20 fires, merged reading by reading, and the workflow of every 10 s grid time read by id.
// schedule-run.ts reads during the soak, schedule-end.ts at the end; what they gathered is the run below.
import { mapPool } from "../../scripts/lib/async.ts";
import { isTerminal } from "./client.ts";
import type { ShepherdClient, TypedAnswer } from "./client.ts";
import type { FireRecord, IndexRow, ScheduleView, WorkflowView } from "./api-shapes.ts";
import { gridTimes, SCHEDULE_ID, workflowIdOfFire } from "./schedule.ts";

/** Grid times up to now (minus a little for the alarm to run) are read by id this often until terminal. */
export const FOLLOW_EVERY_MS = 2_000;
export const FIRE_SETTLE_MS = 1_500;
export const READ_CONCURRENCY = 4;

/** One reading of the schedule's view. */
export interface Reading {
  phase: string;
  readAt: number;
  status: number;
  nextFireAt?: number | null;
  recent?: number;
  oldestAt?: number | null;
  newestAt?: number | null;
  /** The records in their order, to tell whether the next reading still holds this one's last. */
  keys?: string[];
}

/** A fire as the readings recorded it. */
export interface FireSeen extends FireRecord {
  /** The readings (by index) that held it. */
  seenIn: number[];
}

/** What reading `<id>:<t>` by id said. */
export interface ObjectReading {
  /** The HTTP status. */
  status: number;
  workflowStatus: string | null;
  createdAt: number | null;
  readAt: number;
}

/** Fires recorded in two readings under different outcomes or workflow ids, or twice in one reading. */
export type RecordConflict = { kind: string; at: number; readAt: number } & Record<string, unknown>;

export interface ScheduleRun {
  id: string;
  cron: string;
  overlap: string;
  catchupWindowMs: number;
  definitionName: string;
  create: { tries: number; statuses: Record<string, number>; view?: ScheduleView; error?: unknown };
  createdAt: number | null;
  missingApi: boolean;
  readings: Reading[];
  recordConflicts: RecordConflict[];
  /** Fire time → its record. */
  fires: Map<number, FireSeen>;
  /** Grid time → its workflow read by id. */
  objects: Map<number, ObjectReading>;
  lastView?: Reading | null;
  delete?: { tries: number; statuses: Record<string, number>; sentAt: number; answeredAt?: number; ok?: boolean };
  afterDelete?: number;
  followedUntil?: number;
  listed?: { rows: IndexRow[]; pages?: number; error?: string };
}

/** One reading of the view, merged into `fires`; returns the view or null. */
export async function readView(run: ScheduleRun, client: ShepherdClient, phase: string): Promise<ScheduleView | null> {
  const readAt = Date.now();
  const res = await client.getSchedule(SCHEDULE_ID);
  const reading: Reading = { phase, readAt, status: res.status };
  run.readings.push(reading);
  const view = res.status === 200 ? res.value : null;
  if (!view) return null;
  const ats = view.recent.map((fire) => fire.at);
  Object.assign(reading, {
    nextFireAt: view.nextFireAt,
    recent: view.recent.length,
    oldestAt: ats.length ? Math.min(...ats) : null,
    newestAt: ats.length ? Math.max(...ats) : null,
    keys: view.recent.map((fire) => `${fire.at}|${fire.outcome}`),
  });
  mergeFires(run, view.recent, run.readings.length - 1, readAt);
  return view;
}

function mergeFires(run: ScheduleRun, recent: FireRecord[], index: number, readAt: number): void {
  const seen = new Map<number, FireRecord>();
  for (const fire of recent) {
    if (seen.has(fire.at)) run.recordConflicts.push({ kind: "one fire time recorded twice in one reading", at: fire.at, first: seen.get(fire.at), second: fire, readAt });
    seen.set(fire.at, fire);
    const known = run.fires.get(fire.at);
    if (!known) run.fires.set(fire.at, { at: fire.at, outcome: fire.outcome, workflowId: fire.workflowId, error: fire.error, seenIn: [index] });
    else {
      known.seenIn.push(index);
      if (known.outcome !== fire.outcome || known.workflowId !== fire.workflowId) {
        run.recordConflicts.push({ kind: "a fire's record changed between readings", at: fire.at, before: { outcome: known.outcome, workflowId: known.workflowId }, after: { outcome: fire.outcome, workflowId: fire.workflowId }, readAt });
      }
    }
  }
}

/** Reads the object of each grid time up to `upTo` that is not known terminal yet. */
export async function followFires(run: ScheduleRun, client: ShepherdClient, upTo: number): Promise<void> {
  const due = gridTimes(run.createdAt ?? upTo, upTo).filter((t) => !isTerminal(run.objects.get(t)?.workflowStatus));
  await mapPool(due, READ_CONCURRENCY, async (t: number) => {
    const res = await client.getWorkflow(workflowIdOfFire(t));
    if (res.status === 0 || res.status >= 500) return;
    run.objects.set(t, objectReading(res));
  });
}

/** What an answer (200, or 404 for a fire that started nothing) says of a fire's workflow. */
export function objectReading(res: TypedAnswer<WorkflowView>): ObjectReading {
  return { status: res.status, workflowStatus: res.value?.status ?? null, createdAt: res.value?.createdAt ?? null, readAt: Date.now() };
}
