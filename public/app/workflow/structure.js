// The shape of a workflow, or of a published definition, for the step graph: each step's kind and the steps it
// depends on, with any name that is not a step of it dropped so the layout never meets a dangling edge. A run's
// steps come from its view (the plan's, defaults applied), with a map's item counts, a child workflow step's child
// and a worker step's pool riding along for the node to draw.
import { STEP_KINDS } from "../step-kinds.js";

/** `[{ id, status, kind, dependsOn, items?, child?, pool? }]` in the view's order. */
export function workflowStructure(view) {
  const ids = new Set(view.steps.map((step) => step.id));
  return view.steps.map((step) => ({
    id: step.id,
    status: step.status,
    kind: step.kind ?? "action",
    dependsOn: (step.dependsOn ?? []).filter((id) => ids.has(id) && id !== step.id),
    ...(step.items ? { items: step.items } : {}),
    ...(step.child ? { child: step.child } : {}),
    ...(step.pool ? { pool: step.pool } : {}),
  }));
}

/**
 * The shape of a definition for the same graph: no status (nothing ran), each step's kind (the field it sets, as
 * the service's kinds are named) or its action's type, and its dependencies as the service reads them: an absent
 * `dependsOn` means after the previous step (`dependenciesOf` in src/domain/language/definition.ts).
 */
export function definitionStructure(definition) {
  const steps = definition.steps ?? [];
  const ids = new Set(steps.map((step) => step.id));
  return steps.map((step, index) => ({
    id: step.id,
    kind: Object.keys(STEP_KINDS).find((kind) => step[kind] !== undefined) ?? "action",
    dependsOn: (step.dependsOn ?? (index > 0 ? [steps[index - 1].id] : [])).filter((id) => ids.has(id) && id !== step.id),
    ...(step.action ? { actionType: step.action.type } : {}),
    ...(step.action?.pool ? { pool: step.action.pool } : {}),
  }));
}
