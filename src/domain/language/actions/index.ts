/**
 * The action types: what a step's `action`, `compensate` and `verify` may ask an agent to do, told apart by
 * `type`. Each type's schema is its own module here; how an agent performs it is its module under agents/actions/.
 */
import { z } from "zod";
import { HttpActionSchema } from "./http";
import { WorkerActionSchema } from "./worker";

export { HttpActionSchema, type HttpAction } from "./http";
export { poolAfterMoves, PoolNameSchema, WorkerActionSchema, type WorkerAction } from "./worker";

export const ActionSchema = z.discriminatedUnion("type", [HttpActionSchema, WorkerActionSchema]);

export type Action = z.infer<typeof ActionSchema>;
export type ActionTypeName = Action["type"];
