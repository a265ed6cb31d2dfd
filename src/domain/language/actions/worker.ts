/**
 * The `worker` action: done by the user's own workers, which pull it from a named pool (`POST /v1/pools/{pool}/
 * tasks/poll`) and report through the task's token. With `fallback`, a task no worker of its pool took within
 * `afterMs` moves to the next pool, without using an attempt (the supervisor does it, from the alarm).
 */
import { z } from "zod";
import { IdSchema, PayloadSchema } from "../primitives";

/** Pool names share the ids' format: they are keys of objects and parts of URLs. */
export const PoolNameSchema = IdSchema;

/** At most a day: a task that waits longer for a worker belongs in an escalation, not a fallback chain. */
const MAX_FALLBACK_AFTER_MS = 86_400_000;

export const WorkerActionSchema = z.strictObject({
  type: z.literal("worker"),
  pool: PoolNameSchema,
  /** What the worker gets as the task's `input` (templated like an http body). */
  input: PayloadSchema.optional(),
  fallback: z
    .strictObject({
      /** The pools to move to, in order, each after `afterMs` without a worker taking the task. */
      pools: z.array(PoolNameSchema).min(1).max(5),
      afterMs: z.int().min(1_000).max(MAX_FALLBACK_AFTER_MS),
    })
    .optional(),
});

export type WorkerAction = z.infer<typeof WorkerActionSchema>;

/** The pool an attempt of this action is offered to after `moves` reassignments; undefined past the last. */
export function poolAfterMoves(action: WorkerAction, moves: number): string | undefined {
  return moves === 0 ? action.pool : action.fallback?.pools[moves - 1];
}
