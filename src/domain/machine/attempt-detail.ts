import { z } from "zod";
import { AttemptExchangeSchema, type AttemptExchange } from "../exchange/exchange";
import { mapItemOf } from "../language/plan";
import type { Attempt, WorkflowState } from "./state";
import { AttemptViewSchema, toAttemptView } from "./view";

/**
 * `GET /v1/workflows/{id}/steps/{stepId}/attempts/{n}`: the attempt as its step's list shows it, with what it sent
 * and what came back. The workflow's view leaves these out, so it stays small however many attempts were made.
 */
export const AttemptDetailSchema = AttemptViewSchema.extend({
  workflowId: z.string(),
  stepId: z.string(),
  ...AttemptExchangeSchema.shape,
});

export type AttemptDetail = z.infer<typeof AttemptDetailSchema>;

export type AttemptLookup = { ok: true; attempt: AttemptDetail } | { ok: false; code: "not_found"; message: string };

/**
 * The attempt, or which of the step and the attempt is missing. `exchangeOf` reads what was stored for it: nothing
 * while it runs, for an attempt whose agent never reported, or once it is older than the step's latest kept ones.
 * A map's items are not steps here (their items' page shows them).
 */
export function attemptDetail(state: WorkflowState, stepId: string, n: number, exchangeOf: (stepId: string, n: number) => AttemptExchange | undefined): AttemptLookup {
  const step = mapItemOf(stepId) ? undefined : state.steps.find((candidate) => candidate.id === stepId);
  if (!step) return notFound(`Workflow "${state.id}" has no step "${stepId}".`);
  const attempt = step.attempts.find((candidate) => candidate.n === n);
  if (!attempt) return notFound(`Step "${stepId}" of workflow "${state.id}" has no attempt ${n}: ${attemptsMade(step.attempts)}.`);
  return { ok: true, attempt: { workflowId: state.id, stepId, ...toAttemptView(attempt), ...exchangeOf(stepId, n) } };
}

function attemptsMade(attempts: Attempt[]): string {
  const [first, last] = [attempts[0], attempts.at(-1)];
  if (!first || !last) return "it has made none yet";
  return first === last ? `its only attempt is ${first.n}` : `its attempts are ${first.n} to ${last.n}`;
}

function notFound(message: string): AttemptLookup {
  return { ok: false, code: "not_found", message };
}
