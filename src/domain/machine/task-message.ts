import { z } from "zod";
import type { AttemptExchange } from "../exchange/exchange";
import type { RetryRule } from "./remote-outcome";

/** One queue message names one attempt of one step; everything else the agent gets by claiming it. */
export const TaskMessageSchema = z.object({
  tenant: z.string(),
  workflowId: z.string(),
  /** The workflow's definition name: with the tenant, whose backlog the message is (absent in older messages). */
  name: z.string().optional(),
  stepId: z.string(),
  attempt: z.int().min(1),
  kind: z.enum(["action", "compensation"]),
  token: z.string(),
});

export type TaskMessage = z.infer<typeof TaskMessageSchema>;

/**
 * What an agent reports after performing an attempt, with what it sent and what came back (`exchange`): stored with
 * the report, never read by the machine.
 */
export type AttemptReport = ReportOutcome & { exchange?: AttemptExchange };

type ReportOutcome =
  | { type: "succeeded"; output: unknown; status?: number }
  | { type: "accepted" }
  /** The step's `verify` call found the effect of an earlier attempt: its answer is the step's output. */
  | { type: "verified"; output: unknown; status: number }
  /** `rule`: which rule decided `retryable` (remote-outcome.ts), kept on the attempt's error. */
  | { type: "failed"; error: { message: string; retryable: boolean; status?: number; rule?: RetryRule }; retryAfterMs?: number; circuitOpened?: CircuitOpened }
  /** The host's breaker is open: the attempt was set aside before any request, without using an attempt. */
  | { type: "parked"; host: string; openUntil: number };

/** This failure was the one that opened its host's breaker (for every workflow of the tenant). */
export interface CircuitOpened {
  host: string;
  failures: number;
  openUntil: number;
}
