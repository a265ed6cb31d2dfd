// The soak's cron schedule (contract v1.1, "Schedules (cron)"): one schedule created at the soak's start that
// fires every 10 s through the restart, each fire starting the workflow `<scheduleId>:<fire time>` (two action
// steps against the soak's remote, which never declines them). This module is its spec and the names of its
// fires; schedule-run.ts follows it during the soak, schedule-end.ts deletes it and finds every fire's workflow,
// and checks/schedule-fires.ts compares the three ways they were found.
import { familyWorkflow, remotePost, SOAK_STEP_DEFAULTS } from "./definitions.ts";
import type { Definition, SoakWorkflow } from "./definitions.ts";

export const SCHEDULE_ID = "chaos-every-10s";
export const SCHEDULE_KIND = "schedule";
/** The definition's name: the index lists the schedule's workflows by it. */
export const SCHEDULE_DEFINITION_NAME = "chaos-schedule";
export const FIRE_EVERY_MS = 10_000;
/** croner's six fields, seconds first: every 10 s, on the UTC grid (epoch ms divisible by 10 000). */
export const SCHEDULE_CRON = "*/10 * * * * *";
/** Fires missed while Shepherd is down are run when it is back, if at most this old (a restart takes ~2–5 s). */
export const CATCHUP_WINDOW_MS = 60_000;

/** The body of `POST /v1/schedules`. */
export interface ScheduleSpec {
  id: string;
  cron: string;
  timezone: string;
  overlap: string;
  catchupWindowMs: number;
  workflow: { definition: Definition; input: { fire: string } };
}

/** Both steps like the regular soak's (same retry policy, timeouts and breaker), with compensations. */
export function scheduleDefinition(remoteUrl: string): Definition {
  const step = (id: string) => ({
    id,
    action: remotePost(`${remoteUrl}/act/${id}`, id, { fire: "{{ input.fire }}" }),
    compensate: remotePost(`${remoteUrl}/compensate/${id}`, id),
    timeouts: { startToCloseMs: 2_000 },
  });
  return { name: SCHEDULE_DEFINITION_NAME, onFailure: "compensate", defaults: SOAK_STEP_DEFAULTS, steps: [step("s1"), step("s2")] };
}

/**
 * The schedule: `allow`, so every fire starts its workflow whatever the previous one does (the remote's faults
 * can keep one open past the next fire; with `skip` that would be a skipped fire, not a crisp expectation).
 */
export function scheduleSpec(remoteUrl: string): ScheduleSpec {
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
export const workflowIdOfFire = (at: number): string => `${SCHEDULE_ID}:${at}`;

/** The fire time in a schedule workflow's id, or null for an id that is no fire's. */
export function fireAtOf(workflowId: string): number | null {
  const match = new RegExp(`^${SCHEDULE_ID.replace(/[.-]/g, "\\$&")}:(0|[1-9][0-9]*)$`).exec(workflowId);
  return match ? Number(match[1]) : null;
}

/** Every grid time t with from < t ≤ to. */
export function gridTimes(from: number, to: number): number[] {
  const times = [];
  for (let t = Math.floor(from / FIRE_EVERY_MS) * FIRE_EVERY_MS + FIRE_EVERY_MS; t <= to; t += FIRE_EVERY_MS) times.push(t);
  return times;
}

/** A scheduled workflow as the other checks know workflows (kind, payload with its definition, no declines by design). */
export function scheduleWorkflowEntry(id: string, remoteUrl: string): SoakWorkflow {
  return familyWorkflow(SCHEDULE_KIND, { id, input: { fire: "cron" }, definition: scheduleDefinition(remoteUrl) });
}
