// The cron schedule's end (schedule-run.ts follows it until then): the last reading, the delete (retried while
// unanswered), a reading after it (must be 404), then the fires' workflows followed until all are terminal and
// one grid time after the delete has passed (no fire may come after it); finally every grid time read by id and
// the index listed by the definition's name. What comes of it is what checks/schedule-fires.ts judges.
import { mapPool, sleep } from "../../scripts/lib/async.ts";
import { isTerminal } from "./client.ts";
import type { ShepherdClient } from "./client.ts";
import type { IndexRow } from "./api-shapes.ts";
import { FIRE_SETTLE_MS, FOLLOW_EVERY_MS, followFires, objectReading, READ_CONCURRENCY, readView } from "./schedule-readings.ts";
import type { FireSeen, ObjectReading, ScheduleRun } from "./schedule-readings.ts";
import { FIRE_EVERY_MS, gridTimes, SCHEDULE_DEFINITION_NAME, SCHEDULE_ID, workflowIdOfFire } from "./schedule.ts";

/** The schedule's run at its end: its fires and objects in time order, and the ids of every workflow found. */
export type ScheduleResult = Omit<ScheduleRun, "fires" | "objects"> & {
  fires: FireSeen[];
  objects: (ObjectReading & { at: number })[];
  workflowIds: string[];
};

type Delete = NonNullable<ScheduleRun["delete"]>;

/** Ends the schedule, following its fires' workflows at most until `until`, and returns what came of every fire. */
export async function endSchedule(run: ScheduleRun, client: ShepherdClient, until: number, log: (message: string) => void): Promise<ScheduleResult> {
  if (run.createdAt === null) return { ...run, fires: [], objects: [], workflowIds: [] };
  for (let i = 0; i < 10 && !(await readView(run, client, "before delete")); i++) await sleep(500);
  run.lastView = run.readings.findLast((r) => r.status === 200) ?? null;
  const del = await deleteSchedule(client);
  run.delete = del;
  run.afterDelete = (await client.getSchedule(SCHEDULE_ID)).status;
  log(`schedule ${SCHEDULE_ID} deleted (${JSON.stringify(del.statuses)}), GET after it answered ${run.afterDelete}; ${run.fires.size} fires recorded`);
  await followUntilQuiet(run, client, del, until);
  run.followedUntil = Date.now();
  await readEveryGridTime(run, client, run.createdAt, run.followedUntil);
  run.listed = await listByName(client);
  const found = [...run.objects].filter(([, o]) => o.status === 200).map(([t]) => workflowIdOfFire(t));
  const recorded = [...run.fires.values()].flatMap((f) => (f.workflowId && f.outcome === "started" ? [f.workflowId] : []));
  return {
    ...run,
    fires: [...run.fires.values()].sort((a, b) => a.at - b.at),
    objects: [...run.objects].map(([at, o]) => ({ at, ...o })).sort((a, b) => a.at - b.at),
    workflowIds: [...new Set([...found, ...recorded, ...run.listed.rows.map((r) => r.id)])],
  };
}

async function deleteSchedule(client: ShepherdClient): Promise<Delete> {
  const del: Delete = { tries: 0, statuses: {}, sentAt: Date.now() };
  for (const end = Date.now() + 15_000; Date.now() < end; ) {
    del.tries += 1;
    const res = await client.deleteSchedule(SCHEDULE_ID);
    del.statuses[res.status] = (del.statuses[res.status] ?? 0) + 1;
    // A 404 after an unanswered try: the first one deleted it.
    if (res.status === 200 || (res.status === 404 && del.tries > 1)) {
      del.answeredAt = Date.now();
      del.ok = true;
      break;
    }
    if (res.status > 0 && res.status < 500 && res.status !== 429) break;
    await sleep(500);
  }
  return del;
}

/** Follows the fires' workflows until all are terminal and one grid time past the delete, plus its alarm's time, has passed. */
async function followUntilQuiet(run: ScheduleRun, client: ShepherdClient, del: Delete, until: number): Promise<void> {
  const quietUntil = (del.answeredAt ?? del.sentAt) + FIRE_EVERY_MS + FIRE_SETTLE_MS + 500;
  for (;;) {
    await followFires(run, client, Math.min(Date.now(), del.sentAt));
    const open = [...run.objects.values()].filter((o) => o.status === 200 && !isTerminal(o.workflowStatus)).length;
    if ((open === 0 && Date.now() >= quietUntil) || Date.now() >= until) return;
    await sleep(FOLLOW_EVERY_MS / 2);
  }
}

/** Every grid time from the creation to `to`, by id: the fires after the delete included (there must be none). */
async function readEveryGridTime(run: ScheduleRun, client: ShepherdClient, from: number, to: number): Promise<void> {
  await mapPool(gridTimes(from, to), READ_CONCURRENCY, async (t: number) => {
    if (isTerminal(run.objects.get(t)?.workflowStatus)) return;
    for (let i = 0; i < 5; i++) {
      const res = await client.getWorkflow(workflowIdOfFire(t));
      if (res.status === 0 || res.status >= 500) {
        await sleep(300);
        continue;
      }
      run.objects.set(t, objectReading(res));
      return;
    }
  });
}

/** Every row the index lists under the schedule's definition name, page by page. */
async function listByName(client: ShepherdClient): Promise<{ rows: IndexRow[]; pages?: number; error?: string }> {
  const rows: IndexRow[] = [];
  let cursor: string | null | undefined;
  for (let page = 0; page < 50; page++) {
    let res = await client.listWorkflows(cursor, { name: SCHEDULE_DEFINITION_NAME });
    for (let i = 1; i < 5 && res.status !== 200; i++) {
      await sleep(300);
      res = await client.listWorkflows(cursor, { name: SCHEDULE_DEFINITION_NAME });
    }
    if (res.status !== 200 || !res.value) return { error: `list answered ${res.status}`, rows };
    rows.push(...res.value.workflows.map((w) => ({ id: w.id, status: w.status })));
    cursor = res.value.nextCursor;
    if (!cursor) return { rows, pages: page + 1 };
  }
  return { error: "more than 50 pages", rows };
}
