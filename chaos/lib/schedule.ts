// The soak's cron schedule (contract v1.1, "Schedules (cron)"): one schedule created at the soak's start that
// fires every 10 s through the restart, each fire starting the workflow `<scheduleId>:<fire time>` (two action
// steps against the soak's remote, which never declines them). At the end the schedule is read one last time,
// deleted, and its workflows are found three ways: the fires its view recorded (`recent`, read every 15 s and
// merged, since it keeps only the last 20), the object of every 10 s grid time read by id, and the index
// listed by the definition's name. checks.ts ("every schedule fire started exactly one workflow") compares them.
import { mapPool, sleep } from "../../scripts/lib/async.ts";
import { TERMINAL_STATUSES } from "./client.ts";
import { MAIN_REMOTE_BREAKER } from "./faults.ts";

export const SCHEDULE_ID = "chaos-every-10s";
export const SCHEDULE_KIND = "schedule";
/** The definition's name: the index lists the schedule's workflows by it. */
export const SCHEDULE_DEFINITION_NAME = "chaos-schedule";
export const FIRE_EVERY_MS = 10_000;
/** croner's six fields, seconds first: every 10 s, on the UTC grid (epoch ms divisible by 10 000). */
export const SCHEDULE_CRON = "*/10 * * * * *";
/** Fires missed while Shepherd is down are run when it is back, if at most this old (a restart takes ~2–5 s). */
export const CATCHUP_WINDOW_MS = 60_000;
/**
 * `recent` keeps the last 20 fires (200 s at one fire per 10 s): a reading every 15 s leaves 12 readings'
 * margin for readings that fail (the restart) before a fire could drop out unseen.
 */
const RECENT_READ_EVERY_MS = 15_000;
/** Grid times up to now (minus a little for the alarm to run) are read by id this often until terminal. */
const FOLLOW_EVERY_MS = 2_000;
const FIRE_SETTLE_MS = 1_500;
const READ_CONCURRENCY = 4;

/** Both steps like the regular soak's (same retry policy, timeouts and breaker), with compensations. */
const STEP_DEFAULTS = {
  retry: { maxAttempts: 5, initialIntervalMs: 100, backoffCoefficient: 2, maxIntervalMs: 2_000, jitter: 0.2 },
  timeouts: { heartbeatMs: 1_000 },
  breaker: MAIN_REMOTE_BREAKER,
};

export function scheduleDefinition(remoteUrl) {
  const step = (id) => ({
    id,
    action: { type: "http", url: `${remoteUrl}/act/${id}`, method: "POST", body: { workflow: "{{ workflow.id }}", step: id, fire: "{{ input.fire }}" } },
    compensate: { type: "http", url: `${remoteUrl}/compensate/${id}`, method: "POST", body: { workflow: "{{ workflow.id }}", step: id } },
    timeouts: { startToCloseMs: 2_000 },
  });
  return { name: SCHEDULE_DEFINITION_NAME, onFailure: "compensate", defaults: STEP_DEFAULTS, steps: [step("s1"), step("s2")] };
}

/**
 * The schedule: `allow`, so every fire starts its workflow whatever the previous one does (the remote's faults
 * can keep one open past the next fire; with `skip` that would be a skipped fire, not a crisp expectation).
 */
export function scheduleSpec(remoteUrl) {
  return {
    id: SCHEDULE_ID,
    cron: SCHEDULE_CRON,
    timezone: "UTC",
    overlap: "allow",
    catchupWindowMs: CATCHUP_WINDOW_MS,
    workflow: { definition: scheduleDefinition(remoteUrl), input: { fire: "cron" } },
  };
}

/** The workflow id a fire at `at` starts. */
export const workflowIdOfFire = (at) => `${SCHEDULE_ID}:${at}`;

/** The fire time in a schedule workflow's id, or null for an id that is no fire's. */
export function fireAtOf(workflowId) {
  const match = new RegExp(`^${SCHEDULE_ID.replace(/[.-]/g, "\\$&")}:(0|[1-9][0-9]*)$`).exec(workflowId);
  return match ? Number(match[1]) : null;
}

/** Every grid time t with from < t ≤ to. */
export function gridTimes(from, to) {
  const times = [];
  for (let t = Math.floor(from / FIRE_EVERY_MS) * FIRE_EVERY_MS + FIRE_EVERY_MS; t <= to; t += FIRE_EVERY_MS) times.push(t);
  return times;
}

/** A scheduled workflow as the other checks know workflows (kind, payload with its definition, no declines by design). */
export function scheduleWorkflowEntry(id, remoteUrl) {
  return { id, kind: SCHEDULE_KIND, declinedStep: null, declinedBeforeWait: false, language: null, payload: { id, input: { fire: "cron" }, definition: scheduleDefinition(remoteUrl) } };
}

/**
 * Creates the schedule (retrying an unanswered or back-pressured create, the same body replays as 200) and
 * follows it until `stop()`. `paused()` holds while Shepherd restarts: no reading then. Returns the handle:
 * `created` (whether the schedule exists; false with `missingApi` when the build has no schedules),
 * `open()` the fires' workflows not yet terminal (for the alarm sampler), `stop({ until })` the end: the last
 * reading, the delete, and what came of every fire.
 */
export async function startSchedule({ client, remoteUrl, paused, log = () => {} }) {
  const spec = scheduleSpec(remoteUrl);
  const run = {
    id: SCHEDULE_ID,
    cron: SCHEDULE_CRON,
    overlap: spec.overlap,
    catchupWindowMs: CATCHUP_WINDOW_MS,
    definitionName: SCHEDULE_DEFINITION_NAME,
    create: { tries: 0, statuses: {} },
    createdAt: null,
    missingApi: false,
    readings: [],
    /** Fires recorded in two readings under different outcomes or workflow ids, or twice in one reading. */
    recordConflicts: [],
    /** at → {at, outcome, workflowId, error, seenIn: reading indexes}. */
    fires: new Map(),
    /** Grid time → what reading `<id>:<t>` by id said: {status (HTTP), workflowStatus, createdAt, readAt}. */
    objects: new Map(),
  };

  for (const end = Date.now() + 20_000; Date.now() < end; ) {
    run.create.tries += 1;
    const res = await client.createSchedule(spec);
    run.create.statuses[res.status] = (run.create.statuses[res.status] ?? 0) + 1;
    if (res.status === 201 || res.status === 200) {
      run.createdAt = res.body.createdAt;
      run.create.view = res.body;
      break;
    }
    if (res.status === 404 || res.status === 405) {
      run.missingApi = true;
      run.create.error = res.body;
      break;
    }
    if (res.status >= 400 && res.status < 500 && res.status !== 429) {
      run.create.error = res.body;
      break;
    }
    await sleep(500);
  }
  if (run.createdAt !== null) log(`schedule ${SCHEDULE_ID} (${SCHEDULE_CRON}, overlap ${spec.overlap}, catch-up ${CATCHUP_WINDOW_MS / 1000} s) created; first fire at ${new Date(run.create.view.nextFireAt).toISOString()}`);
  else log(`schedule ${SCHEDULE_ID} not created: ${JSON.stringify(run.create)}`);

  /** One reading of the view, merged into `fires`; returns the view or null. */
  async function readView(phase) {
    const readAt = Date.now();
    const res = await client.getSchedule(SCHEDULE_ID);
    const reading = { phase, readAt, status: res.status };
    run.readings.push(reading);
    if (res.status !== 200 || !Array.isArray(res.body?.recent)) return null;
    const view = res.body;
    const index = run.readings.length - 1;
    const ats = view.recent.map((fire) => fire.at);
    Object.assign(reading, {
      nextFireAt: view.nextFireAt,
      recent: view.recent.length,
      oldestAt: ats.length ? Math.min(...ats) : null,
      newestAt: ats.length ? Math.max(...ats) : null,
      // The records in their order, to tell whether the next reading still holds this one's last.
      keys: view.recent.map((fire) => `${fire.at}|${fire.outcome}`),
    });
    const seen = new Map();
    for (const fire of view.recent) {
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
    return view;
  }

  /** Reads the object of each grid time up to now that is not known terminal yet. */
  async function follow(upTo) {
    const due = gridTimes(run.createdAt, upTo).filter((t) => !TERMINAL_STATUSES.has(run.objects.get(t)?.workflowStatus));
    await mapPool(due, READ_CONCURRENCY, async (t) => {
      const res = await client.getWorkflow(workflowIdOfFire(t));
      if (res.status === 0 || res.status >= 500) return;
      run.objects.set(t, { status: res.status, workflowStatus: res.body?.status ?? null, createdAt: res.body?.createdAt ?? null, readAt: Date.now() });
    });
  }

  let stopped = false;
  const loop =
    run.createdAt === null
      ? Promise.resolve()
      : (async () => {
          let lastViewAt = Date.now();
          while (!stopped) {
            await sleep(FOLLOW_EVERY_MS);
            if (stopped || paused()) continue;
            if (Date.now() - lastViewAt >= RECENT_READ_EVERY_MS) {
              lastViewAt = Date.now();
              await readView("during");
            }
            await follow(Date.now() - FIRE_SETTLE_MS);
          }
        })();

  return {
    run,
    created: run.createdAt !== null,
    open: () => [...run.objects].filter(([, o]) => o.status === 200 && !TERMINAL_STATUSES.has(o.workflowStatus)).map(([t]) => workflowIdOfFire(t)),
    /**
     * The end: the last reading, the delete (retried while unanswered), a reading after it (must be 404), then
     * following the fires' workflows until all are terminal and one grid time after the delete has passed
     * (no fire may come after it), at most until `until`; finally every grid time read by id and the index
     * listed by name. Returns `run` with the ids of every workflow found.
     */
    async stop({ until }) {
      stopped = true;
      await loop;
      if (run.createdAt === null) return { ...run, fires: [], objects: [], workflowIds: [] };
      for (let i = 0; i < 10 && !(await readView("before delete")); i++) await sleep(500);
      run.lastView = run.readings.findLast((r) => r.status === 200) ?? null;
      const del = { tries: 0, statuses: {}, sentAt: Date.now() };
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
      run.delete = del;
      run.afterDelete = (await client.getSchedule(SCHEDULE_ID)).status;
      log(`schedule ${SCHEDULE_ID} deleted (${JSON.stringify(del.statuses)}), GET after it answered ${run.afterDelete}; ${run.fires.size} fires recorded`);
      // One grid time past the delete, plus the time its alarm would take: a fire there would show.
      const quietUntil = (del.answeredAt ?? del.sentAt) + FIRE_EVERY_MS + FIRE_SETTLE_MS + 500;
      for (;;) {
        await follow(Math.min(Date.now(), del.sentAt));
        const open = [...run.objects.values()].filter((o) => o.status === 200 && !TERMINAL_STATUSES.has(o.workflowStatus)).length;
        if ((open === 0 && Date.now() >= quietUntil) || Date.now() >= until) break;
        await sleep(FOLLOW_EVERY_MS / 2);
      }
      run.followedUntil = Date.now();
      // Every grid time from the creation to now, by id: the fires after the delete included (there must be none).
      await mapPool(gridTimes(run.createdAt, run.followedUntil), READ_CONCURRENCY, async (t) => {
        if (TERMINAL_STATUSES.has(run.objects.get(t)?.workflowStatus)) return;
        for (let i = 0; i < 5; i++) {
          const res = await client.getWorkflow(workflowIdOfFire(t));
          if (res.status === 0 || res.status >= 500) {
            await sleep(300);
            continue;
          }
          run.objects.set(t, { status: res.status, workflowStatus: res.body?.status ?? null, createdAt: res.body?.createdAt ?? null, readAt: Date.now() });
          return;
        }
      });
      run.listed = await listByName(client);
      const found = [...run.objects].filter(([, o]) => o.status === 200).map(([t]) => workflowIdOfFire(t));
      const recorded = [...run.fires.values()].filter((f) => f.workflowId && f.outcome === "started").map((f) => f.workflowId);
      return {
        ...run,
        fires: [...run.fires.values()].sort((a, b) => a.at - b.at),
        objects: [...run.objects].map(([at, o]) => ({ at, ...o })).sort((a, b) => a.at - b.at),
        workflowIds: [...new Set([...found, ...recorded, ...(run.listed.rows ?? []).map((r) => r.id)])],
      };
    },
  };
}

/** Every row the index lists under the schedule's definition name, page by page. */
async function listByName(client) {
  const rows = [];
  let cursor;
  for (let page = 0; page < 50; page++) {
    let res;
    for (let i = 0; i < 5; i++) {
      res = await client.listWorkflows(cursor, { name: SCHEDULE_DEFINITION_NAME });
      if (res.status === 200) break;
      await sleep(300);
    }
    if (res.status !== 200 || !Array.isArray(res.body?.workflows)) return { error: `list answered ${res.status}`, rows };
    rows.push(...res.body.workflows.map((w) => ({ id: w.id, status: w.status })));
    cursor = res.body.nextCursor;
    if (!cursor) return { rows, pages: page + 1 };
  }
  return { error: "more than 50 pages", rows };
}
