/** An `action` step: an attempt for an agent, with retries, deadlines, heartbeats and an optional `verify`. */
import { z } from "zod";
import { ActionSchema, HttpActionSchema } from "../actions";
import { defineStepKind } from "./step-kind";

export const actionStep = defineStepKind({
  kind: "action",
  definition: ActionSchema,
  plan: z.object({
    kind: z.literal("action"),
    action: ActionSchema,
    /** Asked after an attempt with no clear answer, before the action is sent again (see the definition's `verify`). */
    verify: HttpActionSchema.optional(),
  }),
  state: z.object({ kind: z.literal("action") }),
  planOf: (action, step) => ({ kind: "action" as const, action, ...(step.verify ? { verify: step.verify } : {}) }),
  viewFields: {
    /** A worker action's pool (its first: a task a fallback moved says where it waits in the diagnosis). */
    pool: z.string().optional(),
  },
  view: (_step, plan) => (plan.action.type === "worker" ? { pool: plan.action.pool } : {}),
});
