// Cron schedules as the tests drive them: the routes, the schedule's object and its stored state. A fire is not
// waited for: the schedule's stored next fire is moved to a time already past, as if the clock had reached it, and
// its alarm is run as the runtime would run it then.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { ScheduleState } from "../../src/domain/cron/state";
import { api, bearer, type ApiResponse, type TestTenant } from "./api";
import { DAY, waitStep } from "./workflow-language";

export function scheduleStub(id: string, tenant = "default") {
  return env.SCHEDULES.getByName(`${tenant}:${id}`);
}

/** A workflow that stays open until it gets the event `done` (or is cancelled or terminated): no agent, no remote. */
export const waitingDefinition = (name = "scheduled") => ({ name, steps: [waitStep("hold", { event: "done", timeoutMs: DAY })] });

/**
 * A schedule spec whose cron fires once a day at the whole second before now (six fields, seconds first, UTC):
 * its first fire is a day away, and moving it back a day (`fireOnTime`) gives a fire a second or two late, well
 * within the on-time slack however slow the test.
 */
export function dailySpec(id: string, extra: Record<string, unknown> = {}) {
  const fireAt = Math.floor(Date.now() / 1_000) * 1_000 - 1_000;
  const time = new Date(fireAt);
  return {
    spec: { id, cron: `${time.getUTCSeconds()} ${time.getUTCMinutes()} ${time.getUTCHours()} * * *`, workflow: { definition: waitingDefinition() }, ...extra },
    /** Today's fire, a second ago; the schedule's first fire is this plus a day. */
    fireAt,
  };
}

export function createSchedule(spec: Record<string, unknown>, tenant: TestTenant = "default"): Promise<ApiResponse> {
  return api("POST", "/v1/schedules", spec, { headers: bearer(tenant) });
}

export function getSchedule(id: string, tenant: TestTenant = "default"): Promise<ApiResponse> {
  return api("GET", `/v1/schedules/${id}`, undefined, { headers: bearer(tenant) });
}

export function scheduleAction(id: string, action: "pause" | "resume" | "trigger", tenant: TestTenant = "default"): Promise<ApiResponse> {
  return api("POST", `/v1/schedules/${id}/${action}`, undefined, { headers: bearer(tenant) });
}

/** What the schedule's object has stored (undefined when nothing), read straight from its storage. */
export function storedSchedule(id: string, tenant = "default"): Promise<{ state: ScheduleState; requestHash: string } | undefined> {
  return runInDurableObject(scheduleStub(id, tenant), (_instance, state) => state.storage.get("schedule"));
}

/** When the schedule's alarm is set for, or null. */
export function scheduleAlarm(id: string, tenant = "default"): Promise<number | null> {
  return runInDurableObject(scheduleStub(id, tenant), (_instance, state) => state.storage.getAlarm());
}

/**
 * Rewrites the schedule's stored state (its alarm stays where it is), then evicts the object, which keeps what it
 * loaded in memory: the next call reads the rewritten state.
 */
export async function rewriteSchedule(id: string, change: (state: ScheduleState) => ScheduleState, tenant = "default"): Promise<ScheduleState> {
  const stub = scheduleStub(id, tenant);
  const rewritten = await runInDurableObject(stub, async (_instance, storage) => {
    const stored = await storage.storage.get<{ state: ScheduleState; requestHash: string }>("schedule");
    if (!stored) throw new Error(`schedule ${tenant}:${id} is not stored`);
    const state = change(structuredClone(stored.state));
    await storage.storage.put("schedule", { ...stored, state });
    return state;
  });
  await evictDurableObject(stub);
  return rewritten;
}

/** Runs the schedule's alarm now, as the runtime does once it is due; false when no alarm is set. */
export function runScheduleAlarm(id: string, tenant = "default"): Promise<boolean> {
  return runDurableObjectAlarm(scheduleStub(id, tenant));
}

/** A day passes: the stored next fire moves back a day, to a second or two ago, and the alarm runs. Returns that fire. */
export async function fireOnTime(id: string, tenant = "default"): Promise<number> {
  const { nextFireAt } = await rewriteSchedule(id, (state) => ({ ...state, nextFireAt: state.nextFireAt! - DAY }), tenant);
  if (!(await runScheduleAlarm(id, tenant))) throw new Error(`schedule ${tenant}:${id} has no alarm`);
  return nextFireAt!;
}

let lastFire = 0;
/**
 * The clock reaches a fire `lateMs` ago: the stored next fire is moved there (off the cron's grid: a daily cron
 * has one grid point a day, and each fire of a test needs a time, and so a workflow id, of its own) and the
 * alarm runs. Returns the fire time.
 */
export async function fireAt(id: string, { lateMs = 1_000, tenant = "default" }: { lateMs?: number; tenant?: string } = {}): Promise<number> {
  const at = Math.max(Date.now() - lateMs, lastFire + 1);
  lastFire = at;
  await rewriteSchedule(id, (state) => ({ ...state, nextFireAt: at }), tenant);
  if (!(await runScheduleAlarm(id, tenant))) throw new Error(`schedule ${tenant}:${id} has no alarm`);
  return at;
}

/** The recent fires of a schedule as its owner reads them. */
export async function recentOf(id: string, tenant: TestTenant = "default"): Promise<{ at: number; workflowId?: string; outcome: string; error?: string }[]> {
  const response = await getSchedule(id, tenant);
  if (response.status !== 200) throw new Error(`GET /v1/schedules/${id}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.recent;
}
