// The cron schedule during the soak (schedule.ts has its spec): created at the start, its view read every 15 s
// and merged, and the workflow of every 10 s grid time read by id every 2 s until it is terminal
// (schedule-readings.ts). schedule-end.ts takes over at the end.
import { sleep } from "../../scripts/lib/async.ts";
import { isTerminal } from "./client.ts";
import type { ShepherdClient } from "./client.ts";
import { endSchedule } from "./schedule-end.ts";
import type { ScheduleResult } from "./schedule-end.ts";
import { FIRE_SETTLE_MS, FOLLOW_EVERY_MS, followFires, readView } from "./schedule-readings.ts";
import type { ScheduleRun } from "./schedule-readings.ts";
import { CATCHUP_WINDOW_MS, SCHEDULE_CRON, SCHEDULE_DEFINITION_NAME, SCHEDULE_ID, scheduleSpec, workflowIdOfFire } from "./schedule.ts";
import type { ScheduleSpec } from "./schedule.ts";

/**
 * `recent` keeps the last 20 fires (200 s at one fire per 10 s): a reading every 15 s leaves 12 readings'
 * margin for readings that fail (the restart) before a fire could drop out unseen.
 */
const RECENT_READ_EVERY_MS = 15_000;

export interface ScheduleHandle {
  run: ScheduleRun;
  /** Whether the schedule exists; false with `missingApi` when the build has no schedules. */
  created: boolean;
  /** The fires' workflows not yet terminal (for the alarm sampler). */
  open: () => string[];
  /** The end: the last reading, the delete, and what came of every fire (schedule-end.ts). */
  stop: (options: { until: number }) => Promise<ScheduleResult>;
}

/**
 * Creates the schedule (retrying an unanswered or back-pressured create, the same body replays as 200) and
 * follows it until `stop()`. `paused()` holds while Shepherd restarts: no reading then.
 */
export async function startSchedule({ client, remoteUrl, paused, log = () => {} }: { client: ShepherdClient; remoteUrl: string; paused: () => boolean; log?: (message: string) => void }): Promise<ScheduleHandle> {
  const spec = scheduleSpec(remoteUrl);
  const run: ScheduleRun = {
    id: SCHEDULE_ID, cron: SCHEDULE_CRON, overlap: spec.overlap, catchupWindowMs: CATCHUP_WINDOW_MS, definitionName: SCHEDULE_DEFINITION_NAME,
    create: { tries: 0, statuses: {} }, createdAt: null, missingApi: false, readings: [], recordConflicts: [], fires: new Map(), objects: new Map(),
  };
  await create(run, client, spec);
  if (run.create.view) log(`schedule ${SCHEDULE_ID} (${SCHEDULE_CRON}, overlap ${spec.overlap}, catch-up ${CATCHUP_WINDOW_MS / 1000} s) created; first fire at ${new Date(run.create.view.nextFireAt ?? 0).toISOString()}`);
  else log(`schedule ${SCHEDULE_ID} not created: ${JSON.stringify(run.create)}`);
  const following = run.createdAt === null ? null : followDuring(run, client, paused);
  return {
    run,
    created: run.createdAt !== null,
    open: () => [...run.objects].filter(([, o]) => o.status === 200 && !isTerminal(o.workflowStatus)).map(([t]) => workflowIdOfFire(t)),
    async stop({ until }) {
      await following?.stop();
      return endSchedule(run, client, until, log);
    },
  };
}

async function create(run: ScheduleRun, client: ShepherdClient, spec: ScheduleSpec): Promise<void> {
  for (const end = Date.now() + 20_000; Date.now() < end; ) {
    run.create.tries += 1;
    const res = await client.createSchedule(spec);
    run.create.statuses[res.status] = (run.create.statuses[res.status] ?? 0) + 1;
    if ((res.status === 201 || res.status === 200) && res.value) {
      run.createdAt = res.value.createdAt;
      run.create.view = res.value;
      return;
    }
    if (res.status === 404 || res.status === 405) run.missingApi = true;
    if (res.status >= 400 && res.status < 500 && res.status !== 429) {
      run.create.error = res.body;
      return;
    }
    await sleep(500);
  }
}

/** Reads the view every RECENT_READ_EVERY_MS and the fires' workflows every FOLLOW_EVERY_MS until stopped. */
function followDuring(run: ScheduleRun, client: ShepherdClient, paused: () => boolean): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    let lastViewAt = Date.now();
    while (!stopped) {
      await sleep(FOLLOW_EVERY_MS);
      if (stopped || paused()) continue;
      if (Date.now() - lastViewAt >= RECENT_READ_EVERY_MS) {
        lastViewAt = Date.now();
        await readView(run, client, "during");
      }
      await followFires(run, client, Date.now() - FIRE_SETTLE_MS);
    }
  })();
  return {
    stop() {
      stopped = true;
      return loop;
    },
  };
}

