import { z } from "zod";
import { ScheduledWorkflowSchema, OVERLAP_POLICIES } from "./spec";
import { RecentFireSchema, type ScheduleState } from "./state";

/** The public shape of `GET /v1/schedules/{id}`. */
export const ScheduleViewSchema = z.object({
  id: z.string(),
  cron: z.string(),
  timezone: z.string(),
  overlap: z.enum(OVERLAP_POLICIES),
  catchupWindowMs: z.number(),
  paused: z.boolean(),
  /** null while paused. */
  nextFireAt: z.number().nullable(),
  workflow: ScheduledWorkflowSchema,
  /** The latest fires, newest last. */
  recent: z.array(RecentFireSchema),
  createdAt: z.number(),
  updatedAt: z.number(),
});

export type ScheduleView = z.infer<typeof ScheduleViewSchema>;

export function toScheduleView(state: ScheduleState): ScheduleView {
  return {
    id: state.id,
    cron: state.cron,
    timezone: state.timezone,
    overlap: state.overlap,
    catchupWindowMs: state.catchupWindowMs,
    paused: state.paused,
    nextFireAt: state.nextFireAt ?? null,
    workflow: state.workflow,
    recent: state.recent,
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
  };
}
