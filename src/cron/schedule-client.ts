import type { CronSchedule } from "./cron-schedule";
import { scheduleObjectName } from "./schedule-name";

type ScheduleMethod = "create" | "describe" | "pause" | "resume" | "trigger" | "remove" | "workflowEnded";

/** The schedule object's RPC methods with their plain result types (the generated stub types lose precision). */
export type ScheduleClient = {
  [K in ScheduleMethod]: CronSchedule[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/** The object of one schedule. */
export function scheduleObject(env: Env, tenant: string, id: string): ScheduleClient {
  return env.SCHEDULES.getByName(scheduleObjectName(tenant, id)) as unknown as ScheduleClient;
}
