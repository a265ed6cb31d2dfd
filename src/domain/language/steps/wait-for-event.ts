/**
 * A `waitForEvent` step: the timeout is a timer the supervisor owns, and the event comes through the inbox, which
 * keeps one that arrives before its wait starts (machine/steps/wait-for-event.ts).
 */
import { z } from "zod";
import { IdSchema, MAX_TIMER_MS } from "../primitives";
import { defineStepKind, kindOfOwnField } from "./step-kind";

export const WAIT_TIMEOUT_OUTCOMES = ["fail", "skip"] as const;

/** Wait for a named event; a wait without a timeout would hold the workflow open for ever, so it is required. */
export const WaitForEventSchema = z.strictObject({
  event: IdSchema,
  timeoutMs: z.int().min(1).max(MAX_TIMER_MS),
  onTimeout: z.enum(WAIT_TIMEOUT_OUTCOMES).optional(),
});

export type WaitForEvent = z.infer<typeof WaitForEventSchema>;

export const waitForEventStep = defineStepKind({
  ...kindOfOwnField("waitForEvent", WaitForEventSchema),
  timer: {
    status: "waiting",
    deadline: "wait_timeout",
    blockedReason: "waiting_for_event",
    waitsFor: (plan, workflowId) => `waits for the event "${plan.waitForEvent.event}" (POST /v1/workflows/${workflowId}/events)`,
    attention: (plan) => `waiting for event ${plan.waitForEvent.event}`,
  },
  viewFields: {
    /** A step waiting for an event: which, and when it gives up. */
    waitingFor: z.object({ event: z.string(), timeoutAt: z.number() }).optional(),
  },
  view: (step, plan) => (step.status === "waiting" && step.timerAt !== undefined ? { waitingFor: { event: plan.waitForEvent.event, timeoutAt: step.timerAt } } : {}),
});
