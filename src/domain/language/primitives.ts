/**
 * The smallest pieces of the workflow language, apart so that every kind of step and action can use them without
 * depending on the definition they are assembled into (schemas.ts).
 */
import { z } from "zod";
import { ID_PATTERN } from "../contract";
import { jsonLimitProblem, LIMITS } from "./limits";
// For its effect: zod words every problem of every schema built on these pieces as validation-messages.ts says.
import "../validation-messages";

/** Any JSON we store and pass on (input, outputs, progress): bounded in size and depth. */
export const PayloadSchema = z.unknown().superRefine((value, ctx) => {
  const problem = jsonLimitProblem(value, LIMITS.payloadBytes);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

export { ID_PATTERN } from "../contract";

/** Workflow ids, step ids and definition names share one format (contract.ts) so they are safe in keys and URLs. */
export const IdSchema = z.string().regex(ID_PATTERN, `must match ${ID_PATTERN.source}`);

/** A worker task's priority in its pool: 1 is handed out first. */
export const PrioritySchema = z.int().min(1).max(5);

/** At most a year: longer timers belong in a schedule, not in a workflow that holds its state that long. */
export const MAX_TIMER_MS = 31_536_000_000;

/** A published definition by name; without `version`, the latest one when the workflow starts. */
export const DefinitionRefSchema = z.strictObject({
  name: IdSchema,
  version: z.int().min(1).optional(),
});
