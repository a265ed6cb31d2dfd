/**
 * What an agent does with one type of action. The type's schema is the language's (domain/actions/); how it is
 * performed is the module beside this one, and the registry (index.ts) asks for one per type.
 */
import type { z } from "zod";
import type { Action, ActionTypeName } from "../../domain/language/actions";
import type { ClaimedTask } from "../../domain/machine";
import type { AttemptReport } from "../../domain/machine/task-message";
import type { TargetPolicy } from "../../domain/security/target-policy";

export interface ActionType<T extends ActionTypeName> {
  /** The schema of its actions in a definition (`type` told apart). */
  readonly schema: z.ZodType<Extract<Action, { type?: T }>>;
  /**
   * Performs one attempt of `task.action` (an action of this type) and says how it went. Never throws for the
   * far side's behaviour: a failure is a report, and the deadlines cover an attempt that never reports.
   */
  perform(task: ClaimedTask, token: string, policy: TargetPolicy, signal: AbortSignal): Promise<AttemptReport>;
}
