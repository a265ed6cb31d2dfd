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

/**
 * An attempt the remote accepted with a 202 (an asynchronous http step: the remote holds the work and reports through
 * the step's task token) is "waiting", and so is its step; a wait for an event is "waiting" too. The two are drawn
 * apart: this is the 202 job's colour class (the CSS's --callback), beside the status's own class.
 */
export const AWAITING_CALLBACK = "awaiting_callback";

/** The colour class of an attempt in this status: its status, or a 202 job's. */
export function attemptColour(status) {
  return status === "waiting" ? AWAITING_CALLBACK : status;
}

/** The colour class of a step (`{ status, kind }`): a waiting action step waits for its 202 job's callback. */
export function stepColour(step) {
  return step.status === "waiting" && (step.kind ?? "action") === "action" ? AWAITING_CALLBACK : step.status;
}
