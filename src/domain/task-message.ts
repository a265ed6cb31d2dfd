import { z } from "zod";

/** One queue message names one attempt of one step; everything else the agent gets by claiming it. */
export const TaskMessageSchema = z.object({
  tenant: z.string(),
  workflowId: z.string(),
  stepId: z.string(),
  attempt: z.int().min(1),
  kind: z.enum(["action", "compensation"]),
  token: z.string(),
});

export type TaskMessage = z.infer<typeof TaskMessageSchema>;

/** What an agent reports after performing an attempt. */
export type AttemptReport =
  | { type: "succeeded"; output: unknown }
  | { type: "accepted" }
  | { type: "failed"; error: { message: string; retryable: boolean; status?: number }; retryAfterMs?: number };
