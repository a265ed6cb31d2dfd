import { z } from "zod";
import { OVERLAP_POLICIES, ScheduledWorkflowSchema } from "./spec";

/** `delayed`: back-pressure deferred the fire's start; it becomes `started` (or `failed`) when it is made. */
export const FIRE_OUTCOMES = ["started", "delayed", "skipped_overlap", "buffered", "missed", "failed"] as const;

export const RecentFireSchema = z.object({
  at: z.number(),
  workflowId: z.string().optional(),
  outcome: z.enum(FIRE_OUTCOMES),
  /** Why a start failed (a definition that no longer resolves), or why it was delayed (back-pressure). */
  error: z.string().optional(),
  /** How many times back-pressure deferred this fire's start before it was made. */
  delays: z.int().min(1).optional(),
});

/** One schedule as its object keeps it: the spec with its defaults applied, and what its fires did. */
export const ScheduleStateSchema = z.object({
  tenant: z.string(),
  id: z.string(),
  cron: z.string(),
  timezone: z.string(),
  workflow: ScheduledWorkflowSchema,
  overlap: z.enum(OVERLAP_POLICIES),
  catchupWindowMs: z.number(),
  paused: z.boolean(),
  createdAt: z.number(),
  updatedAt: z.number(),
  /** Absent while paused. */
  nextFireAt: z.number().optional(),
  /** The workflow the latest started fire started; it may have ended since (the object asks it). */
  open: z.string().optional(),
  /** buffer_one: the fire waiting for the open workflow to end. */
  buffered: z.number().optional(),
  /** Fires decided on but not yet started: committed first, so a crash before the start loses none. */
  pendingStarts: z.array(z.number()),
  /** Back-pressure deferred the pending starts: none is tried again before this time. */
  deferredUntil: z.number().optional(),
  /** cancel_previous: the open workflow to cancel before the pending starts. */
  pendingCancel: z.string().optional(),
  /** Newest last, at most RECENT_FIRES. */
  recent: z.array(RecentFireSchema),
});

export type RecentFire = z.infer<typeof RecentFireSchema>;
export type ScheduleState = z.infer<typeof ScheduleStateSchema>;
export type FireOutcome = (typeof FIRE_OUTCOMES)[number];
