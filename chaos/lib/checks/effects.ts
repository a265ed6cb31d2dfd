// Nothing happened twice, and what happened matches how each workflow ended: the remote's ledger (both hosts')
// against the workflows' final views.
import { TERMINAL_STATUSES } from "../client.ts";
import type { SoakWorkflow } from "../definitions.ts";
import type { Final } from "../finals.ts";
import type { KeyRecord, RemoteStats } from "../remote-ledger.ts";
import { fail, pass } from "./check.ts";
import type { Check, Violation } from "./check.ts";

/**
 * At most one applied effect per Idempotency-Key and per logical operation (workflow, step, action or
 * compensation), keys as the contract says, and effects that match each workflow's ending: a completed
 * workflow applied every action once and undid nothing; a compensated or cancelled one undid every action it
 * applied, and no action was applied after its compensation. Declined-by-design workflows end compensated.
 */
export function checkEffects(remoteStats: RemoteStats, finals: readonly Final[], workflows: readonly SoakWorkflow[]): Check {
  const name = "at most one effect per key";
  const violations = keyViolations(remoteStats);
  const keyByOp = new Map(Object.values(remoteStats.keys).map((k) => [`${k.workflowId}|${k.stepId}|${k.kind}`, k]));
  const declined = new Map(workflows.map((wf) => [wf.id, wf.declinedStep]));
  // Sleep and wait steps call no remote: only action steps have effects to count.
  const actionSteps = new Map(workflows.map((wf) => [wf.id, new Set(wf.payload.definition.steps.filter((s) => s.action).map((s) => s.id))]));
  let compensationsWithoutEffect = 0;
  for (const f of finals) {
    if (!f.view) continue;
    const status = f.view.status;
    const declinedStep = declined.get(f.id);
    if (declinedStep && status !== "compensated" && TERMINAL_STATUSES.has(status)) {
      violations.push({ kind: "declined by the remote but not compensated", id: f.id, status, declinedStep });
    }
    const steps = f.view.steps.filter((step) => actionSteps.get(f.id)?.has(step.id) ?? true);
    for (const step of steps) {
      const found = judgeStepEffects(f.id, status, step, keyByOp);
      violations.push(...found.violations);
      if (found.compensatedWithoutEffect) compensationsWithoutEffect += 1;
    }
  }
  const t = remoteStats.totals;
  const detail =
    `${t.action.applied} effects / ${t.action.keys} action keys, ${t.compensation.applied} / ${t.compensation.keys} compensation keys` +
    `${compensationsWithoutEffect ? ` (${compensationsWithoutEffect} undoing an action never applied)` : ""}; ${violations.length} violation(s)`;
  return (violations.length ? fail : pass)(name, detail, { violations: violations.slice(0, 30), compensationsWithoutEffect });
}

/** Keys applied twice or not as the contract says, and operations applied twice under varying keys. */
function keyViolations(remoteStats: RemoteStats): Violation[] {
  const violations: Violation[] = [];
  for (const k of Object.values(remoteStats.keys)) {
    if (k.applied > 1) violations.push({ kind: "key applied twice", key: k.key, applied: k.applied });
    if (!k.wellFormed) violations.push({ kind: "malformed key", key: k.key, workflowId: k.workflowId, stepId: k.stepId });
  }
  for (const [op, applied] of Object.entries(remoteStats.ops)) {
    if (applied > 1) violations.push({ kind: "operation applied twice (key varied)", op, applied });
  }
  return violations;
}

/** One action step's effects against its workflow's ending. */
function judgeStepEffects(id: string, status: string, step: { id: string; status: string }, keyByOp: Map<string, KeyRecord>): { violations: Violation[]; compensatedWithoutEffect: boolean } {
  const violations: Violation[] = [];
  const action = keyByOp.get(`${id}|${step.id}|action`);
  const undo = keyByOp.get(`${id}|${step.id}|compensation`);
  const applied = action?.applied ?? 0;
  const undone = undo?.applied ?? 0;
  if (status === "completed") {
    if (applied !== 1) violations.push({ kind: "completed but action applied ≠ 1", id, stepId: step.id, applied });
    if (undone > 0) violations.push({ kind: "completed but compensated", id, stepId: step.id });
  }
  const undoing = status === "compensated" || status === "cancelled";
  if (undoing && applied > 0 && undone === 0) violations.push({ kind: "effect left in place (applied, never compensated)", id, stepId: step.id, stepStatus: step.status });
  if (action?.appliedAt && undo?.appliedAt && action.appliedAt > undo.appliedAt) {
    violations.push({ kind: "action applied after its compensation", id, stepId: step.id });
  }
  return { violations, compensatedWithoutEffect: undoing && applied === 0 && undone > 0 };
}
