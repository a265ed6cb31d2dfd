import { z } from "zod";
import { DefinitionRefSchema, DefinitionSchema } from "../language/definition";
import { IdSchema, PayloadSchema } from "../language/schemas";
import { cronProblem } from "./cron";

/** Temporal's schedule overlap policies, by what a fire does while the previous fire's workflow is open. */
export const OVERLAP_POLICIES = ["skip", "buffer_one", "cancel_previous", "allow"] as const;

/** A schedule's id leaves room for `:<fire time in ms>` in the ids of the workflows it starts. */
export const ScheduleIdSchema = IdSchema.max(100, "must be at most 100 characters (the workflow ids add :<fire time>)");

/** What each fire starts: a definition inline or by reference, with its input. */
export const ScheduledWorkflowSchema = z
  .strictObject({ definition: DefinitionSchema.optional(), definitionRef: DefinitionRefSchema.optional(), input: PayloadSchema.optional() })
  .refine((workflow) => (workflow.definition === undefined) !== (workflow.definitionRef === undefined), {
    message: "give exactly one of definition or definitionRef",
  });

export const ScheduleSpecSchema = z
  .strictObject({
    id: ScheduleIdSchema,
    cron: z.string().min(1).max(256),
    timezone: z.string().min(1).max(64).optional(),
    workflow: ScheduledWorkflowSchema,
    overlap: z.enum(OVERLAP_POLICIES).optional(),
    /** How late a fire may still run after downtime; older ones are recorded as missed. Default 0 (on time only). */
    catchupWindowMs: z.int().min(0).max(31_536_000_000).optional(),
    paused: z.boolean().optional(),
  })
  .superRefine((spec, ctx) => {
    const problem = cronProblem(spec.cron, spec.timezone);
    if (problem) ctx.addIssue({ code: "custom", path: [problem.field], message: problem.message });
  });

export type ScheduleSpecInput = z.infer<typeof ScheduleSpecSchema>;
export type ScheduledWorkflow = z.infer<typeof ScheduledWorkflowSchema>;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];
