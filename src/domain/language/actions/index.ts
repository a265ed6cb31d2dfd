/**
 * The action types: what a step's `action`, `compensate` and `verify` may ask an agent to do, told apart by
 * `type`. Each type's schema is its own module here; how an agent performs it is its module under agents/actions/.
 */
import { z } from "zod";
import { HttpActionSchema } from "./http";

export { HttpActionSchema, type HttpAction } from "./http";

export const ActionSchema = z.discriminatedUnion("type", [HttpActionSchema]);

export type Action = z.infer<typeof ActionSchema>;
export type ActionTypeName = NonNullable<Action["type"]>;

/** Definitions and plans from before there was more than one type leave it out: they mean `http`. */
export const DEFAULT_ACTION_TYPE = "http" satisfies ActionTypeName;

export function actionTypeOf(action: Action): ActionTypeName {
  return action.type ?? DEFAULT_ACTION_TYPE;
}
