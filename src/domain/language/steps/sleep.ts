/** A `sleep` step: a timer the supervisor (the object's alarm) owns. No queue message, no agent, no polling. */
import { z } from "zod";
import { MAX_TIMER_MS } from "../primitives";
import { templatePaths } from "../templates";
import { parseWakeTime } from "../wake-time";
import { defineStepKind, kindOfOwnField } from "./step-kind";

/** Sleep for a duration, or until a time (epoch ms or ISO 8601, usually a template). Exactly one of the two. */
export const SleepSchema = z
  .strictObject({
    durationMs: z.int().min(0).max(MAX_TIMER_MS).optional(),
    until: z.union([z.string().min(1).max(2048), z.int().min(0)]).optional(),
  })
  .refine((sleep) => (sleep.durationMs === undefined) !== (sleep.until === undefined), "a sleep needs exactly one of durationMs or until");

export type Sleep = z.infer<typeof SleepSchema>;

export const sleepStep = defineStepKind({
  ...kindOfOwnField("sleep", SleepSchema),
  /** A literal `until` must be a time; a template is read when the step starts. */
  check: (sleep, stepId) => {
    const { until } = sleep;
    if (until === undefined || templatePaths(until).length > 0 || parseWakeTime(until) !== undefined) return undefined;
    return `step "${stepId}": sleep.until must be epoch milliseconds, an ISO 8601 date-time or a template`;
  },
  timer: { status: "sleeping", deadline: "sleep", blockedReason: "sleeping", waitsFor: () => "a sleep step; it wakes then" },
  viewFields: {
    /** A sleeping step wakes then. */
    sleepingUntil: z.number().optional(),
  },
  view: (step) => (step.status === "sleeping" && step.timerAt !== undefined ? { sleepingUntil: step.timerAt } : {}),
});
