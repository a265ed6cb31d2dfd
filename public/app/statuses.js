// The workflow statuses GET /v1/workflows filters by (the API's WORKFLOW_STATUSES), in the order an
// operator scans them: open ones first, then how they ended.
export const WORKFLOW_STATUSES = ["running", "paused", "compensating", "needs_attention", "completed", "failed", "compensated", "cancelled", "terminated"];

/** How a workflow can end; "failed", "cancelled" and "terminated" ones may still be redriven. */
export const OUTCOMES = ["completed", "failed", "compensated", "cancelled", "terminated"];

export function isTerminal(status) {
  return OUTCOMES.includes(status);
}

/** "needs_attention" → "needs attention": statuses as words, their class keeps the underscore. */
export function statusLabel(status) {
  return status.replaceAll("_", " ");
}

/** Ids and definition names share one alphabet (the contract's id pattern); anything else is a 400. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
