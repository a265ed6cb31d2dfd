// Statuses as the dashboard shows them. The lists themselves are the API's (generated/contract.js, a copy of
// src/domain/contract.ts): WORKFLOW_STATUSES in the order an operator scans them, open ones first.
import { TERMINAL_WORKFLOW_STATUSES } from "./generated/contract.js";

/** How a workflow can end; "failed", "cancelled" and "terminated" ones may still be redriven. */
export const OUTCOMES = TERMINAL_WORKFLOW_STATUSES;

export function isTerminal(status) {
  return OUTCOMES.includes(status);
}

/** "needs_attention" → "needs attention": statuses as words, their class keeps the underscore. */
export function statusLabel(status) {
  return status.replaceAll("_", " ");
}
