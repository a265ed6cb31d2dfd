/**
 * When a start asks to run: now, at `startAt` (epoch ms or ISO 8601, as a sleep's `until`), or `startDelayMs` from
 * now, at most MAX_START_DELAY_MS ahead. The schemas check the form; `scheduledStartOf` checks the time against the
 * clock, which is a parameter, so the front door and the workflow's object each pass their own.
 */
import { z } from "zod";
import { MAX_START_DELAY_MS } from "../contract";
import { parseWakeTime } from "./wake-time";

export const StartAtSchema = z
  .union([z.int().min(0), z.string().min(1).max(64)])
  .refine((value) => parseWakeTime(value) !== undefined, "must be epoch milliseconds or an ISO 8601 date-time (e.g. 2027-01-31T09:00:00Z)");

export const StartDelaySchema = z.int().min(0).max(MAX_START_DELAY_MS, `must be at most ${MAX_START_DELAY_MS} (365 days)`);

/** A start's own time, and which field of the body named it (for a refusal that says which). */
export interface ScheduledStart {
  at: number;
  field: "startAt" | "startDelayMs";
}

export interface StartTimeIssue {
  path: ["startAt"] | ["startDelayMs"];
  message: string;
  code: "custom";
}

/**
 * The start time a body asks for, seen at `now`: undefined for a start now, else its time, or why it cannot be.
 * A `startAt` in the past is not refused here: a repeated start may arrive after its time, and is answered with
 * the workflow it started (see `lateStartIssue`, checked by the workflow's object once it knows it is new).
 */
export function scheduledStartOf(body: { startAt?: number | string | undefined; startDelayMs?: number | undefined }, now: number): ScheduledStart | StartTimeIssue | undefined {
  if (body.startDelayMs !== undefined) return { at: now + body.startDelayMs, field: "startDelayMs" };
  if (body.startAt === undefined) return undefined;
  const at = parseWakeTime(body.startAt) ?? now;
  if (at - now > MAX_START_DELAY_MS) return { path: ["startAt"], message: `is more than 365 days ahead (${new Date(at).toISOString()})`, code: "custom" };
  return { at, field: "startAt" };
}

/** A new workflow's `startAt` that has passed by the time it would be created: refused, since it cannot be kept. */
export function lateStartIssue(start: ScheduledStart | undefined, now: number): StartTimeIssue | undefined {
  if (start?.field !== "startAt" || start.at >= now) return undefined;
  return { path: ["startAt"], message: `is in the past (${new Date(start.at).toISOString()}); give a time to come, or no startAt to start now`, code: "custom" };
}
